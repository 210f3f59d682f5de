package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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

func TestAccessTokens(t *testing.T) {
	cases := []struct {
		event, claims, add, suppress string
	}{
		{"pretoken-user.json", `{"tenant_id":"acme"}`, `["memory/user"]`, `["memory/admin"]`},
		{"pretoken-admin.json", `{"tenant_id":"acme"}`, `["memory/user","memory/admin"]`, `[]`},
		{"pretoken-gateway.json", `{"tenant_id":"acme"}`, `[]`, `[]`},
	}
	for _, c := range cases {
		t.Run(c.event, func(t *testing.T) {
			d, failed := invoke(t, c.event)
			if failed != "" {
				t.Fatalf("refused: %s", failed)
			}
			access, _ := d["accessTokenGeneration"].(map[string]any)
			for field, want := range map[string]string{"claimsToAddOrOverride": c.claims, "scopesToAdd": c.add, "scopesToSuppress": c.suppress, "claimsToSuppress": "[]"} {
				if got, _ := json.Marshal(access[field]); string(got) != want {
					t.Errorf("%s = %s, want %s", field, got, want)
				}
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
