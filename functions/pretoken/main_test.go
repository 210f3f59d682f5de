package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
)

// invoke runs the handler on events/name as Lambda would, and returns the
// response's claimsAndScopeOverrideDetails or the error's message.
func invoke(t *testing.T, name string) (map[string]any, string) {
	t.Helper()
	payload, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TABLE_NAME": "t"}
	h, err := fromEnv(func(k string) string { return env[k] }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := lambda.NewHandler(h.Handle).Invoke(context.Background(), payload)
	if err != nil {
		return nil, err.Error()
	}
	var ev struct {
		Response struct {
			Details map[string]any `json:"claimsAndScopeOverrideDetails"`
		} `json:"response"`
	}
	if err := json.Unmarshal(out, &ev); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return ev.Response.Details, ""
}

// TestAccessTokens runs the trigger on version 3 events (V3_0, which the
// template sets) shaped as the Amazon Cognito developer guide's Pre token
// generation Lambda trigger page gives them
// (https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-lambda-pre-token-generation.html,
// read 2026-12-07), of the trigger sources a person's sign-in and refresh
// send and of a gateway's client-credentials grant. A person's answer
// leaves the ID token and the groups as they are; a client-credentials
// answer holds accessTokenGeneration and nothing else, the one token that
// grant issues.
func TestAccessTokens(t *testing.T) {
	cases := []struct {
		event, source, claims, add, suppress string
		keys                                 []string
	}{
		{"pretoken-user.json", "TokenGeneration_HostedAuth", `{"tenant_id":"acme"}`, `["memory/user"]`, `["memory/admin"]`, personKeys},
		{"pretoken-admin.json", "TokenGeneration_Authentication", `{"tenant_id":"acme"}`, `["memory/user","memory/admin"]`, `[]`, personKeys},
		{"pretoken-refresh.json", "TokenGeneration_RefreshTokens", `{"tenant_id":"acme"}`, `["memory/user"]`, `["memory/admin"]`, personKeys},
		{"pretoken-gateway.json", ClientCredentials, `{"tenant_id":"acme"}`, `[]`, `[]`, []string{"accessTokenGeneration"}},
	}
	for _, c := range cases {
		t.Run(c.event, func(t *testing.T) {
			if got := triggerSource(t, c.event); got != c.source {
				t.Fatalf("the event's triggerSource is %q, want %q", got, c.source)
			}
			d, failed := invoke(t, c.event)
			if failed != "" {
				t.Fatalf("refused: %s", failed)
			}
			if got := slices.Sorted(maps.Keys(d)); !slices.Equal(got, c.keys) {
				t.Errorf("claimsAndScopeOverrideDetails has %q, want exactly %q", got, c.keys)
			}
			access, _ := d["accessTokenGeneration"].(map[string]any)
			for field, want := range map[string]string{"claimsToAddOrOverride": c.claims, "scopesToAdd": c.add, "scopesToSuppress": c.suppress, "claimsToSuppress": "[]"} {
				if got, _ := json.Marshal(access[field]); string(got) != want {
					t.Errorf("%s = %s, want %s", field, got, want)
				}
			}
			if c.source == ClientCredentials {
				return
			}
			// The ID token is left as it is: empty, not null.
			if got, _ := json.Marshal(d["idTokenGeneration"]); string(got) != `{"claimsToAddOrOverride":{},"claimsToSuppress":[]}` {
				t.Errorf("idTokenGeneration = %s, want it unchanged", got)
			}
		})
	}
	d, _ := invoke(t, "pretoken-admin.json")
	if got, _ := json.Marshal(d["groupOverrideDetails"]); !strings.Contains(string(got), `"groupsToOverride":["memory-admin"]`) {
		t.Errorf("groupOverrideDetails = %s, want the user's groups back", got)
	}
}

// personKeys are the parts of the answer to a person's sign-in.
var personKeys = []string{"accessTokenGeneration", "groupOverrideDetails", "idTokenGeneration"}

// triggerSource returns the triggerSource of events/name.
func triggerSource(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Version       string `json:"version"`
		TriggerSource string `json:"triggerSource"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Version != "3" {
		t.Errorf("%s: version %q, want 3 (the template's V3_0)", name, ev.Version)
	}
	return ev.TriggerSource
}

func TestNoTenantNoToken(t *testing.T) {
	for _, name := range []string{"pretoken-no-tenant.json", "pretoken-gateway-no-tenant.json"} {
		if d, failed := invoke(t, name); !strings.Contains(failed, "no tenant") {
			t.Errorf("%s: response %v, error %q; want a refusal that says there is no tenant", name, d, failed)
		}
	}
}

func TestFromEnvValidates(t *testing.T) {
	if _, err := fromEnv(func(string) string { return "" }, slog.Default()); err == nil {
		t.Error("started without TABLE_NAME, which every function's settings require")
	}
}
