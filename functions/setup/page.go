package setup

import (
	"fmt"
	"net/url"
	"strings"
)

// Names of the memory page's environment variables (functions/page).
// template.yaml sets them from the identity the stack creates, or leaves
// them empty for an external issuer; the local stack sets them to its
// token issuer's managed-login stand-in.
const (
	// EnvAuthURL is the base URL of the managed login (Amazon Cognito's
	// https://<prefix>.auth.<region>.amazoncognito.com); empty: the page
	// asks for a token instead of signing in.
	EnvAuthURL = "AUTH_URL"
	// EnvPageClientID is the page's app client there; empty with AUTH_URL
	// set, the client comes with each request (the page API's stage
	// variable, as template.yaml gives it).
	EnvPageClientID = "PAGE_CLIENT_ID"
)

// PageSettings is the validated configuration of the memory page.
type PageSettings struct {
	// AuthURL is the managed login's base URL, without a trailing slash;
	// ClientID the page's client, set only with AuthURL.
	AuthURL, ClientID string
	// Scope is the scope of the /v1/me routes, which the page asks for.
	Scope string
}

// Page reads the memory page's settings through getenv. AUTH_URL is empty
// or an https URL with a host and no query (http only for this machine,
// the local stack); PAGE_CLIENT_ID is set only with AUTH_URL;
// USER_SCOPE defaults to DefaultUserScope. The error names the variable.
func Page(getenv func(string) string) (PageSettings, error) {
	s := PageSettings{
		AuthURL:  strings.TrimRight(strings.TrimSpace(getenv(EnvAuthURL)), "/"),
		ClientID: strings.TrimSpace(getenv(EnvPageClientID)),
		Scope:    strings.TrimSpace(getenv(EnvUserScope)),
	}
	if s.Scope == "" {
		s.Scope = DefaultUserScope
	}
	if strings.ContainsAny(s.Scope, " \t") {
		return PageSettings{}, fmt.Errorf("setup: %s=%q: one scope, without spaces", EnvUserScope, s.Scope)
	}
	if s.AuthURL == "" && s.ClientID != "" {
		return PageSettings{}, fmt.Errorf("setup: %s=%q needs %s (it is empty)", EnvPageClientID, s.ClientID, EnvAuthURL)
	}
	if s.AuthURL == "" {
		return s, nil
	}
	u, err := url.Parse(s.AuthURL)
	local := u != nil && u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost")
	if err != nil || u.Host == "" || (u.Scheme != "https" && !local) || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return PageSettings{}, fmt.Errorf("setup: %s=%q: want the https URL of the managed login, such as https://example.auth.us-east-1.amazoncognito.com", EnvAuthURL, s.AuthURL)
	}
	return s, nil
}
