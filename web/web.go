// Package web holds the "What I remember about you" page: one static page
// (HTML, CSS and JavaScript, no build step) that frontends copy or serve,
// that the local stack serves at its own URL, and that the deployed stack
// serves under the HTTP API's /app/ path (functions/page).
package web

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"

	"github.com/usermemory/usermemory/memory"
)

//go:embed static
var static embed.FS

// Files returns the page's files: index.html, app.js, signin.js,
// download.js, import.js, import-prompts.json, style.css and favicon.svg.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // The embedded folder is fixed at build time.
	}
	return sub
}

// Path is where the stack serves the page: under the path /app/ of the
// page's own HTTP API (PageApi, whose one route is $default), an origin
// apart from the fact API's, which the page calls across origins
// (docs/decisions.md, "The page").
const Path = "/app/"

// ContentSecurityPolicy is the policy every file of the page is served
// with. index.html carries the same directives in a meta element, for a
// frontend that copies the files; the header adds frame-ancestors, which
// a meta element cannot set, so that no other site frames the page's
// buttons. connect-src stays open: the page calls the fact API and, to
// sign in, the token endpoint of the identity provider, both configured.
const ContentSecurityPolicy = "default-src 'self'; connect-src *; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// SecurityHeaders are the headers of every file of the page, wherever it
// is served: the policy above, no referrer (the address may carry a
// sign-in code for a moment), no sniffing of types.
func SecurityHeaders() map[string]string {
	return map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy,
		"Referrer-Policy":         "no-referrer",
		"X-Content-Type-Options":  "nosniff",
	}
}

// Config is what the page reads from config.json. Empty fields are left
// out of it.
type Config struct {
	// APIURL is the fact API's base URL; empty means the folder above
	// the page's (the page under /app/ of the local stack's fact API).
	// Deployed, PageApi's stage variable apiUrl gives it.
	APIURL string `json:"apiUrl,omitempty"`
	// AuthURL is the base URL of an OAuth 2.0 authorization server with
	// Amazon Cognito's managed-login endpoints (/oauth2/authorize,
	// /oauth2/token, /logout), and ClientID the page's public client
	// there. With both, the page signs in (authorization code with
	// PKCE); without, it asks for a token.
	AuthURL  string `json:"authUrl,omitempty"`
	ClientID string `json:"clientId,omitempty"`
	// Scope is the scope the page asks for, besides openid.
	Scope string `json:"scope,omitempty"`
	// TokenCommand is the shell command that prints a new token for the
	// fact API, such as the local stack's `go run ./localtest token
	// --tenant acme --user ana`. When a token the page was given expires
	// or is refused, the page shows it on Connect, with --user set to the
	// subject of the token that ended (and --admin added when that token
	// had the admin scope). Empty: the page only asks for a new token; a
	// page that signs in (AuthURL) offers to sign in again instead.
	TokenCommand string `json:"tokenCommand,omitempty"`
}

// JSON returns c as config.json, with maxImportChars, the longest text
// an import takes (memory.MaxImportChars), which the page's paste box
// shows and holds to. It is not a setting: it is the service's limit.
func (c Config) JSON() []byte {
	b, _ := json.Marshal(struct {
		Config
		MaxImportChars int `json:"maxImportChars"`
	}{c, memory.MaxImportChars}) // Strings and a number always marshal.
	return b
}

// ImportPrompts returns, by source ("ChatGPT", "Claude", "Gemini", and ""
// for any other assistant), what the user asks the old assistant so that
// it lists what it remembers, one fact per line, in the third person: the
// page's import-prompts.json, which the page shows and the local chat's
// /import help prints.
func ImportPrompts() map[string]string {
	b, err := fs.ReadFile(Files(), "import-prompts.json")
	if err != nil {
		panic(err) // The embedded file is fixed at build time.
	}
	var out map[string]string
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err) // web_test.go holds the file's form.
	}
	return out
}

// ImportPrompt returns the prompt of source, matched without regard to
// case, or the prompt for any other assistant.
func ImportPrompt(source string) string {
	prompts := ImportPrompts()
	for k, v := range prompts {
		if k != "" && strings.EqualFold(k, source) {
			return v
		}
	}
	return prompts[""]
}

// Handler serves the page and, at /config.json, {"apiUrl": apiURL} so that
// the page knows where the fact API is. It is [NewHandler] with that
// configuration.
func Handler(apiURL string) http.Handler { return NewHandler(Config{APIURL: apiURL}) }

// NewHandler serves the page's files at the root, with [SecurityHeaders],
// and cfg at /config.json.
func NewHandler(cfg Config) http.Handler {
	mux := http.NewServeMux()
	body := cfg.JSON()
	mux.HandleFunc("GET /config.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		setSecurityHeaders(w.Header())
		_, _ = w.Write(body)
	})
	files := http.FileServerFS(Files())
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		files.ServeHTTP(w, r)
	}))
	return mux
}

func setSecurityHeaders(h http.Header) {
	for k, v := range SecurityHeaders() {
		h.Set(k, v)
	}
}
