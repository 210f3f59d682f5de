package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"testing"
)

// TestStrictInputOverHTTP sends, through the API Gateway emulator, the
// inputs that used to be rewritten: each is a 400 problem with its code,
// and the stored facts stay as they were.
func TestStrictInputOverHTTP(t *testing.T) {
	user := newUser("strict")
	tok := userToken(t, tenant, user)
	api.Put(t, tok, "k", "kept-zq")
	cases := []struct {
		name, path, body string
		code             int64
	}{
		{"invalid UTF-8 in the key", "/v1/me/facts/k%FF%FE", `{"value":"overwritten-zq"}`, 5380000000212},
		{"invalid UTF-8 in the value", "/v1/me/facts/k", "{\"value\":\"\xff\xfe\"}", 5380000000210},
		{"an unpaired surrogate", "/v1/me/facts/k", `{"value":"\ud800"}`, 5380000000210},
		{"a duplicate member", "/v1/me/facts/k", `{"value":"first-zq","value":"second-zq"}`, 5380000000211},
		{"a key the canonical form would rewrite", "/v1/me/facts/K%21", `{"value":"overwritten-zq"}`, 5380000000109},
		{"an origin only the extractor writes", "/v1/me/facts/k", `{"value":"overwritten-zq","origin":"conversation"}`, 5380000000110},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPut, st.Info.APIURL+c.path, bytes.NewReader([]byte(c.body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			resp, err := httpc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var p struct{ Code int64 }
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/problem+json" ||
				json.Unmarshal(b, &p) != nil || p.Code != c.code {
				t.Errorf("PUT %s %q = %d %s %s, want 400 problem with code %d", c.path, c.body, resp.StatusCode, resp.Header.Get("Content-Type"), b, c.code)
			}
		})
	}
	if got := facts(t, "/v1/me/facts", tok); !maps.Equal(got, map[string]string{"k": "kept-zq"}) {
		t.Errorf("facts = %v, want only k = kept-zq", got)
	}
}
