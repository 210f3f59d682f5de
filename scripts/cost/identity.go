package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// identityRead is when the Cognito prices below were read. The pricing
// page, https://aws.amazon.com/cognito/pricing/, could not be read from
// here: its tables render as unresolved placeholders in the copies
// available. The rates are those of transcriptions of it, each named in
// docs/cost.md's Prices table, and stay unconfirmed on AWS's own page.
const identityRead = "2026-12-07"

// Cognito's machine-to-machine prices, US East (N. Virginia).
const (
	// cognitoM2MPerToken is a successful client-credentials token
	// response, the first 250,000 a month: $2.25 per 1,000 (Vantage's
	// description of the billing code USE1-CUPM2MTokenRequestsFull,
	// updated 2025-04-27; Classmethod's note of 2024-05-13, Tokyo).
	cognitoM2MPerToken = 0.00225
	// cognitoM2MClientMonth is an app client that uses the
	// client-credentials grant, a month, prorated by the second: $6, for
	// the first 100 (Classmethod's note of 2024-05-13, Tokyo).
	cognitoM2MClientMonth = 6.0
	// cognitoDefaultTokenMinutes is an access token's life when the app
	// client sets no AccessTokenValidity: 60 minutes (AWS::Cognito::
	// UserPoolClient, AccessTokenValidity, the CloudFormation user guide).
	cognitoDefaultTokenMinutes = 60
)

// gatewayClient is the template's app client that uses the
// client-credentials grant, and the life of its access tokens.
type gatewayClient struct {
	name          string
	tokenMinutes  float64
	clientsOfPool int // app clients with the client-credentials grant
}

// gatewayClients reads template.yaml's app clients that use the
// client-credentials grant; the first one's token life is returned.
func gatewayClients(root string) (gatewayClient, error) {
	src, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		return gatewayClient{}, err
	}
	doc, err := samtemplate.Decode(src)
	if err != nil {
		return gatewayClient{}, err
	}
	var g gatewayClient
	res, _ := doc["Resources"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(res)) {
		m, _ := res[id].(map[string]any)
		props, _ := m["Properties"].(map[string]any)
		flows, _ := props["AllowedOAuthFlows"].([]any)
		if m["Type"] != "AWS::Cognito::UserPoolClient" || !containsAny(flows, "client_credentials") {
			continue
		}
		g.clientsOfPool++
		if g.name != "" {
			continue
		}
		g.name, g.tokenMinutes = id, tokenMinutes(props)
	}
	return g, nil
}

// tokenMinutes is an app client's access token life in minutes, from
// AccessTokenValidity and TokenValidityUnits (hours by default).
func tokenMinutes(props map[string]any) float64 {
	v, ok := props["AccessTokenValidity"]
	if !ok {
		return cognitoDefaultTokenMinutes
	}
	n, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
	units, _ := props["TokenValidityUnits"].(map[string]any)
	switch units["AccessToken"] {
	case "minutes":
		return n
	case "seconds":
		return n / 60
	case "days":
		return n * 24 * 60
	}
	return n * 60
}

func containsAny(l []any, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// writeIdentity writes what the stack's own identity costs: the page's
// sign-ins as monthly active users, and the gateway's client-credentials
// tokens and app client.
func writeIdentity(w io.Writer, p profile, st stack) {
	fmt.Fprintf(w, "\n## The identity\n\n")
	if st.userPoolTier == "" {
		fmt.Fprintf(w, "The stack trusts an external issuer (`JwtIssuer`): Cognito costs nothing.\n")
		return
	}
	g := st.gateway
	tokens := 30 * 24 * 60 / g.tokenMinutes
	fmt.Fprintf(w, "The user pool the stack makes (%s plan) bills the people who sign in on the memory page, and the gateway's machine tokens. Prices read %s (see the note in `scripts/cost/identity.go`).\n\n",
		st.userPoolTier, identityRead)
	fmt.Fprintf(w, "| part | usage a month | price | USD a month |\n|---|---|---|---:|\n")
	fmt.Fprintf(w, "| Cognito monthly active users: the page's sign-ins | 1 for each user who signs in on the page in the month (the profile's user does: %g visit(s) a week); a user who only chats through the gateway signs in nowhere: 0 | the first %s MAU of the account free, then $%.3f per MAU | 0.00 for each of the first %s users, %.3f for each past them |\n",
		p.pageVisitsWeek, grouped(cognitoFreeMAU), cognitoEssentialsMAU, grouped(cognitoFreeMAU), cognitoEssentialsMAU)
	fmt.Fprintf(w, "| Cognito client-credentials token requests: the gateway | %s a tenant for each gateway process that keeps its token (one per tenant: the tenant is in the token) for its life, %g minutes (%s) | $%.2f per 1,000 | %.2f a tenant and gateway process |\n",
		grouped(tokens), g.tokenMinutes, tokenLifeSource(g.tokenMinutes), cognitoM2MPerToken*1000, tokens*cognitoM2MPerToken)
	fmt.Fprintf(w, "| Cognito client-credentials app clients | %d (%s) | $%.2f a month each | %.2f |\n",
		g.clientsOfPool, g.name, cognitoM2MClientMonth, float64(g.clientsOfPool)*cognitoM2MClientMonth)
}

func tokenLifeSource(minutes float64) string {
	if minutes == cognitoDefaultTokenMinutes {
		return "Cognito's default: the client sets no AccessTokenValidity"
	}
	return "the client's AccessTokenValidity"
}
