package stack

import (
	"net/http"
	"strings"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/localtest/token"
	"github.com/usermemory/usermemory/web"
)

// issuerHandler serves, at issuerURL, the token issuer (its JWKS and
// discovery document) and the stand-in of a user pool's managed login
// (token.SignIn), which signs the memory page in as the stack's own
// identity does once deployed.
func (s *Stack) issuerHandler(issuerURL string) http.Handler {
	s.signIn = token.NewSignIn(s.issuer, issuerURL)
	mux := http.NewServeMux()
	mux.Handle("/", s.issuer.Handler(issuerURL))
	for _, p := range []string{token.AuthorizePath, token.TokenPath, token.LogoutPath} {
		mux.Handle(p, s.signIn.Handler())
	}
	return mux
}

// pageSignIn points the memory page's function (the one whose environment
// has AUTH_URL, which template.yaml leaves empty for an issuer it did not
// create, and the local stack always names its own) at the managed-login
// stand-in, with the local audience as the page's client: the page at
// Info.AppURL signs in as on a stack that made its identity.
func (s *Stack) pageSignIn(env map[string]string) {
	if v, ok := env[setup.EnvAuthURL]; ok && v == "" {
		env[setup.EnvAuthURL] = s.Info.Issuer
		env[setup.EnvPageClientID] = s.Info.Audience
	}
}

// configureSignIn registers the page served by the API (Info.AppURL, also
// opened as localhost) as the one client of the managed-login stand-in.
func (s *Stack) configureSignIn() {
	s.Info.AppURL = s.Info.APIURL + web.Path
	s.signIn.SetClient(token.Client{
		ID:          s.Info.Audience,
		URLs:        []string{s.Info.AppURL, strings.Replace(s.Info.AppURL, "127.0.0.1", "localhost", 1)},
		TenantClaim: s.Info.TenantClaim, UserScope: s.Info.UserScope, AdminScope: s.Info.AdminScope,
	})
}

// SignIn returns the managed-login stand-in, whose tokens' lifetime tests
// may shorten.
func (s *Stack) SignIn() *token.SignIn { return s.signIn }

// tokenCommand is the command that prints a token for this stack, as `go
// run ./localtest up` prints it: with -state when the state folder is not
// the default one. The memory page shows it when a token ends
// (web.Config.TokenCommand).
func tokenCommand(stateDir string) string {
	state := ""
	if stateDir != DefaultStateDir() {
		state = " -state " + shellWord(stateDir)
	}
	return "go run ./localtest token" + state + " --tenant acme --user ana"
}

// shellWord quotes s for a POSIX shell when it holds anything but
// characters that never need quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
