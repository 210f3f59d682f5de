package main

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/claims"
)

// ClientCredentials is the trigger source of a machine-to-machine token
// (a client-credentials grant), which Cognito sends with the V3_0 event;
// every other source is a person's sign-in or refresh.
const ClientCredentials = "TokenGeneration_ClientCredentials"

// Event is Cognito's pre token generation event of version 3 (V3_0; the
// request is the V2_0 one, "version two and three events are identical"),
// with a response that says only what the trigger changes: a
// client-credentials grant issues an access token alone, so its answer
// holds accessTokenGeneration alone (Amazon Cognito developer guide, Pre
// token generation Lambda trigger,
// https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-lambda-pre-token-generation.html,
// read 2026-12-07). The events/pretoken-*.json samples follow that page.
type Event struct {
	events.CognitoEventUserPoolsHeader
	Request  events.CognitoEventUserPoolsPreTokenGenRequestV2_0 `json:"request"`
	Response Response                                           `json:"response"`
}

// Response is the event's response.
type Response struct {
	ClaimsAndScopeOverrideDetails *OverrideDetails `json:"claimsAndScopeOverrideDetails"`
}

// OverrideDetails are the token changes. IDTokenGeneration and
// GroupOverrideDetails are left out (nil) for a client-credentials grant,
// which has no ID token and no groups.
type OverrideDetails struct {
	IDTokenGeneration     *events.IDTokenGenerationV2_0    `json:"idTokenGeneration,omitempty"`
	AccessTokenGeneration events.AccessTokenGenerationV2_0 `json:"accessTokenGeneration"`
	GroupOverrideDetails  *events.GroupConfigurationV2_0   `json:"groupOverrideDetails,omitempty"`
}

// Handler adapts Cognito's pre token generation event to package claims.
type Handler struct {
	claims claims.Config
	log    *slog.Logger
}

// NewHandler returns the handler that puts the tenant into tenantClaim
// and grants userScope and adminScope.
func NewHandler(tenantClaim, userScope, adminScope string, log *slog.Logger) *Handler {
	return &Handler{claims: claims.Config{TenantClaim: tenantClaim, UserScope: userScope, AdminScope: adminScope}, log: log}
}

// Handle fills the event's response with the grant of its user or
// client. When no grant can be made (a user without a tenant, a gateway
// that names none) it returns the error, and Cognito refuses the token
// with its message: a token without a tenant would only be refused later,
// by every route.
func (h *Handler) Handle(_ context.Context, ev Event) (Event, error) {
	machine := ev.TriggerSource == ClientCredentials
	var g claims.Grant
	var err error
	if machine {
		g, err = h.claims.ForClient(ev.Request.ClientMetadata)
	} else {
		g, err = h.claims.ForUser(ev.Request.UserAttributes[claims.TenantAttribute], ev.Request.GroupConfiguration.GroupsToOverride)
	}
	if err != nil {
		h.log.Warn("pretoken: no token", slog.String("triggerSource", ev.TriggerSource),
			slog.String("clientId", ev.CallerContext.ClientID), slog.String("error", err.Error()))
		return ev, err
	}
	add := make(map[string]any, len(g.Claims))
	for k, v := range g.Claims {
		add[k] = v
	}
	d := &OverrideDetails{AccessTokenGeneration: events.AccessTokenGenerationV2_0{
		ClaimsToAddOrOverride: add,
		ClaimsToSuppress:      []string{},
		ScopesToAdd:           nonNil(g.Scopes),
		ScopesToSuppress:      nonNil(g.Suppress),
	}}
	if !machine {
		// A person's ID token is left as it is, and the groups are given
		// back as Cognito sent them: an empty groupOverrideDetails would
		// take them away.
		d.IDTokenGeneration = &events.IDTokenGenerationV2_0{ClaimsToAddOrOverride: map[string]any{}, ClaimsToSuppress: []string{}}
		groups := ev.Request.GroupConfiguration
		d.GroupOverrideDetails = &groups
	}
	ev.Response.ClaimsAndScopeOverrideDetails = d
	h.log.Info("pretoken: granted", slog.String("triggerSource", ev.TriggerSource),
		slog.String("clientId", ev.CallerContext.ClientID), slog.Any("scopes", g.Scopes))
	return ev, nil
}

// nonNil returns s, or an empty list for nil: the response lists every
// field, none as null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
