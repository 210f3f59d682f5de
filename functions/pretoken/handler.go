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

// Handler adapts Cognito's pre token generation event (V2_0 and V3_0,
// which have one shape) to package claims.
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
func (h *Handler) Handle(_ context.Context, ev events.CognitoEventUserPoolsPreTokenGenV2_0) (events.CognitoEventUserPoolsPreTokenGenV2_0, error) {
	var g claims.Grant
	var err error
	if ev.TriggerSource == ClientCredentials {
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
	// Go cannot leave a field out of the response: the ID token is left
	// as it is, and the groups are given back as Cognito sent them.
	ev.Response.ClaimsAndScopeOverrideDetails = events.ClaimsAndScopeOverrideDetailsV2_0{
		IDTokenGeneration: events.IDTokenGenerationV2_0{ClaimsToAddOrOverride: map[string]any{}, ClaimsToSuppress: []string{}},
		AccessTokenGeneration: events.AccessTokenGenerationV2_0{
			ClaimsToAddOrOverride: add,
			ClaimsToSuppress:      []string{},
			ScopesToAdd:           nonNil(g.Scopes),
			ScopesToSuppress:      nonNil(g.Suppress),
		},
		GroupOverrideDetails: ev.Request.GroupConfiguration,
	}
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
