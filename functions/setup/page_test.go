package setup_test

import (
	"testing"

	"github.com/usermemory/usermemory/functions/setup"
)

// TestPage: the page's settings, and each bad one refused with the name
// of its variable.
func TestPage(t *testing.T) {
	env := func(auth, client, scope string) func(string) string {
		m := map[string]string{setup.EnvAuthURL: auth, setup.EnvPageClientID: client, setup.EnvUserScope: scope}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		auth, client, scope string
		want                setup.PageSettings
	}{
		{"", "", "", setup.PageSettings{Scope: setup.DefaultUserScope}},
		{"https://x.auth.eu-west-1.amazoncognito.com/", "abc", "memory/user", setup.PageSettings{AuthURL: "https://x.auth.eu-west-1.amazoncognito.com", ClientID: "abc", Scope: "memory/user"}},
		{"http://127.0.0.1:4100", "usermemory-local", "", setup.PageSettings{AuthURL: "http://127.0.0.1:4100", ClientID: "usermemory-local", Scope: setup.DefaultUserScope}},
		// The client comes with each request, as a stage variable.
		{"https://x.auth.eu-west-1.amazoncognito.com", "", "", setup.PageSettings{AuthURL: "https://x.auth.eu-west-1.amazoncognito.com", Scope: setup.DefaultUserScope}},
	} {
		got, err := setup.Page(env(c.auth, c.client, c.scope))
		if err != nil || got != c.want {
			t.Errorf("Page(%q, %q, %q) = %+v, %v; want %+v", c.auth, c.client, c.scope, got, err, c.want)
		}
	}
	for _, c := range [][3]string{
		{"", "abc", ""},
		{"http://x.auth.eu-west-1.amazoncognito.com", "abc", ""},
		{"https://x.example/?a=b", "abc", ""},
		{"x.auth.eu-west-1.amazoncognito.com", "abc", ""},
		{"", "", "memory/user memory/admin"},
	} {
		if got, err := setup.Page(env(c[0], c[1], c[2])); err == nil {
			t.Errorf("Page(%q) = %+v, want an error", c, got)
		}
	}
}
