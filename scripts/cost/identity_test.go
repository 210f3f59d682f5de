package main

import "testing"

// TestGatewayClientOfTheTemplate: the machine-token rows are priced for
// template.yaml's client-credentials app clients and their token life.
func TestGatewayClientOfTheTemplate(t *testing.T) {
	g, err := gatewayClients("../..")
	if err != nil {
		t.Fatal(err)
	}
	if g.name != "GatewayClient" || g.clientsOfPool != 1 || g.tokenMinutes != cognitoDefaultTokenMinutes {
		t.Errorf("gateway client %+v, want GatewayClient alone, with Cognito's default token life", g)
	}
}

func TestTokenMinutes(t *testing.T) {
	for _, c := range []struct {
		props map[string]any
		want  float64
	}{
		{map[string]any{}, 60},
		{map[string]any{"AccessTokenValidity": 2}, 120},
		{map[string]any{"AccessTokenValidity": 30, "TokenValidityUnits": map[string]any{"AccessToken": "minutes"}}, 30},
		{map[string]any{"AccessTokenValidity": 1, "TokenValidityUnits": map[string]any{"AccessToken": "days"}}, 1440},
	} {
		if got := tokenMinutes(c.props); got != c.want {
			t.Errorf("tokenMinutes(%v) = %g, want %g", c.props, got, c.want)
		}
	}
}
