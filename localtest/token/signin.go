package token

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Paths of the managed login's endpoints, as Amazon Cognito names them
// under a user pool's domain.
const (
	AuthorizePath = "/oauth2/authorize"
	TokenPath     = "/oauth2/token"
	LogoutPath    = "/logout"
)

// codeLifetime is how long an authorization code may be redeemed, as
// Cognito's (five minutes).
const codeLifetime = 5 * time.Minute

// Client is the one public app client of a [SignIn]: the memory page.
type Client struct {
	// ID is the client_id; the access tokens carry it, and as their
	// audience too, the one the local authorizer accepts.
	ID string
	// URLs are the client's callback and sign-out URLs: a redirect_uri
	// or logout_uri must be one of them exactly.
	URLs []string
	// TenantClaim names the claim of the tenant; UserScope is granted to
	// every user, AdminScope to those signed in as admins (as the pre
	// token generation trigger adds it for the group memory-admin).
	TenantClaim, UserScope, AdminScope string
}

// SignIn is the local stand-in of a Cognito user pool's managed login:
// the authorization code grant with PKCE (S256 only, and required), the
// state passed through, a sign-in form that takes any user name and
// tenant without a password, and a sign-out that sends the browser back.
// It is test infrastructure: it lets the page's sign-in run against the
// local stack and in its browser tests. Serve it with [SignIn.Handler].
type SignIn struct {
	issuer    *Issuer
	issuerURL string

	mu     sync.Mutex
	client *Client
	ttl    time.Duration
	codes  map[string]grant
	now    func() time.Time
}

// grant is what a code stands for until it is redeemed.
type grant struct {
	user, tenant string
	admin        bool
	redirectURI  string
	challenge    string
	expires      time.Time
}

// NewSignIn returns the managed login of the issuer at issuerURL, which
// signs the tokens. It knows no client until [SignIn.SetClient].
func NewSignIn(issuer *Issuer, issuerURL string) *SignIn {
	return &SignIn{issuer: issuer, issuerURL: issuerURL, ttl: time.Hour, codes: map[string]grant{}, now: time.Now}
}

// SetClient sets the one client the sign-in serves.
func (s *SignIn) SetClient(c Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client = &c
}

// SetTokenTTL sets the lifetime of the access tokens issued from now on;
// Cognito's default is one hour, which is this one's too.
func (s *SignIn) SetTokenTTL(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ttl = d
}

// Handler serves [AuthorizePath] (GET: the sign-in form; POST: its
// answer, a redirect with the code and the state), [TokenPath] and
// [LogoutPath].
func (s *SignIn) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+AuthorizePath, s.authorizeForm)
	mux.HandleFunc("POST "+AuthorizePath, s.authorize)
	mux.HandleFunc("POST "+TokenPath, s.token)
	mux.HandleFunc("GET "+LogoutPath, s.logout)
	return mux
}

// authRequest is a request to the authorization endpoint, checked.
type authRequest struct {
	ClientID, RedirectURI, State, Scope, Challenge string
}

// readAuthRequest checks the parameters of a request to the authorization
// endpoint. An unknown client or redirect URI is answered 400 here, never
// redirected to (RFC 6749, section 4.1.2.1); ok is false then.
func (s *SignIn) readAuthRequest(w http.ResponseWriter, q url.Values) (authRequest, bool) {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	r := authRequest{ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"), State: q.Get("state"),
		Scope: q.Get("scope"), Challenge: q.Get("code_challenge")}
	switch {
	case c == nil || r.ClientID != c.ID:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
	case !slices.Contains(c.URLs, r.RedirectURI):
		http.Error(w, "redirect_uri is not a callback URL of the client", http.StatusBadRequest)
	case q.Get("response_type") != "code":
		http.Error(w, "response_type must be code", http.StatusBadRequest)
	case q.Get("code_challenge_method") != "S256" || len(r.Challenge) != 43:
		http.Error(w, "this local managed login wants PKCE: code_challenge_method=S256 and a code_challenge", http.StatusBadRequest)
	default:
		return r, true
	}
	return r, false
}

var formPage = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in (local)</title></head>
<body><main>
<h1>Sign in</h1>
<p>The local stack's stand-in of the managed login: any user name, no password.</p>
<form method="post">
<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.RedirectURI}}">
<input type="hidden" name="state" value="{{.State}}">
<input type="hidden" name="scope" value="{{.Scope}}">
<input type="hidden" name="response_type" value="code">
<input type="hidden" name="code_challenge" value="{{.Challenge}}">
<input type="hidden" name="code_challenge_method" value="S256">
<p><label>User name <input id="username" name="username" required autocomplete="username"></label></p>
<p><label>Tenant <input id="tenant" name="tenant" required value="acme"></label></p>
<p><label><input id="admin" name="admin" type="checkbox" value="1"> Admin of the tenant</label></p>
<p><button type="submit" id="signin">Sign in</button></p>
</form>
</main></body></html>
`))

func (s *SignIn) authorizeForm(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readAuthRequest(w, r.URL.Query())
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = formPage.Execute(w, req)
}

// authorize takes the form's answer and sends the browser back to the
// client with a code and the state, as the managed login does.
func (s *SignIn) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "malformed form", http.StatusBadRequest)
		return
	}
	req, ok := s.readAuthRequest(w, r.PostForm)
	if !ok {
		return
	}
	user, tenant := strings.TrimSpace(r.PostForm.Get("username")), strings.TrimSpace(r.PostForm.Get("tenant"))
	if user == "" || tenant == "" {
		http.Error(w, "a user name and a tenant are required", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	s.mu.Lock()
	s.codes[code] = grant{user: user, tenant: tenant, admin: r.PostForm.Get("admin") != "",
		redirectURI: req.RedirectURI, challenge: req.Challenge, expires: s.now().Add(codeLifetime)}
	s.mu.Unlock()
	back := url.Values{"code": {code}}
	if req.State != "" {
		back.Set("state", req.State)
	}
	http.Redirect(w, r, req.RedirectURI+"?"+back.Encode(), http.StatusFound)
}

// oauthError answers the token endpoint's error (RFC 6749, section 5.2).
func oauthError(w http.ResponseWriter, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

// redeem takes the code of form out of the codes (a code is redeemed
// once, right or wrong) and checks it against the client, the redirect
// URI and the PKCE verifier.
func (s *SignIn) redeem(form url.Values) (grant, *Client, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.codes[form.Get("code")]
	delete(s.codes, form.Get("code"))
	sum := sha256.Sum256([]byte(form.Get("code_verifier")))
	switch {
	case form.Get("grant_type") != "authorization_code":
		return g, s.client, "unsupported_grant_type"
	case s.client == nil || form.Get("client_id") != s.client.ID:
		return g, s.client, "invalid_client"
	case !ok || s.now().After(g.expires) || form.Get("redirect_uri") != g.redirectURI:
		return g, s.client, "invalid_grant"
	case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(g.challenge)) != 1:
		return g, s.client, "invalid_grant"
	}
	return g, s.client, ""
}

// token redeems a code for an access token (the tenant claim, the scopes,
// client_id and token_use as Cognito's carry them after the trigger), an
// ID token and a refresh token, which this stand-in does not take back.
// Like Cognito's, it answers any origin (Access-Control-Allow-Origin: *).
func (s *SignIn) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "no-store")
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request", "malformed form")
		return
	}
	g, c, failed := s.redeem(r.PostForm)
	if failed != "" {
		oauthError(w, failed, "the code, the client, the redirect_uri or the code_verifier does not match")
		return
	}
	s.mu.Lock()
	ttl := s.ttl
	s.mu.Unlock()
	scopes := []string{"openid", c.UserScope}
	if g.admin {
		scopes = append(scopes, c.AdminScope)
	}
	access, err := s.issuer.Sign(Claims{Issuer: s.issuerURL, Audience: c.ID, Subject: g.user, TenantClaim: c.TenantClaim,
		Tenant: g.tenant, Scopes: scopes, TTL: ttl, Extra: map[string]any{"client_id": c.ID, "token_use": "access", "username": g.user}})
	if err != nil {
		oauthError(w, "server_error", err.Error())
		return
	}
	id, err := s.issuer.Sign(Claims{Issuer: s.issuerURL, Audience: c.ID, Subject: g.user, TTL: ttl,
		Extra: map[string]any{"token_use": "id", "cognito:username": g.user}})
	if err != nil {
		oauthError(w, "server_error", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "id_token": id, "refresh_token": rand.Text(),
		"token_type": "Bearer", "expires_in": int(ttl.Seconds())})
}

// logout sends the browser back to logout_uri, a sign-out URL of the
// client; nothing else is kept here to forget.
func (s *SignIn) logout(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	q := r.URL.Query()
	if c == nil || q.Get("client_id") != c.ID || !slices.Contains(c.URLs, q.Get("logout_uri")) {
		http.Error(w, "unknown client_id, or logout_uri is not a sign-out URL of the client", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, q.Get("logout_uri"), http.StatusFound)
}
