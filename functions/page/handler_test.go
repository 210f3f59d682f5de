package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/web"
)

// cognito are the settings of a stack that made its own identity.
var cognito = setup.PageSettings{AuthURL: "https://usermemory-123456789012.auth.eu-west-1.amazoncognito.com", ClientID: "4pageclientexample", Scope: "memory/user"}

// TestServesThePage runs the function on the sample events SAM uses, all
// of the $default route: the page at /app/ (also the sign-in's callback,
// with its code and state), its files under /app/, with the page's
// security headers on every answer, /app sent to /app/, and nothing else
// served.
func TestServesThePage(t *testing.T) {
	h := newHandler(cognito)
	index, err := fs.ReadFile(web.Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	script, err := fs.ReadFile(web.Files(), "signin.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		event, contentType, location string
		status                       int
		body                         string
	}{
		{"page-index.json", "text/html", "", http.StatusOK, string(index)},
		// The managed login comes back to the page with the code and the
		// state in the query: the page, unchanged.
		{"page-callback.json", "text/html", "", http.StatusOK, string(index)},
		{"page-no-slash.json", "", "/app/", http.StatusMovedPermanently, ""},
		{"page-script.json", "text/javascript", "", http.StatusOK, string(script)},
		{"page-missing.json", "text/plain", "", http.StatusNotFound, "404 page not found\n"},
		// $default takes every method; the page answers only GET and HEAD.
		{"page-post.json", "text/plain", "", http.StatusMethodNotAllowed, "405 method not allowed\n"},
	} {
		resp := httpapitest.Invoke(t, h, httpapitest.ReadEvent(t, c.event))
		if resp.StatusCode != c.status || resp.Body != c.body || resp.IsBase64Encoded {
			t.Errorf("%s: %d, %d bytes (base64 %v); want %d with %d bytes", c.event, resp.StatusCode, len(resp.Body), resp.IsBase64Encoded, c.status, len(c.body))
		}
		if got := resp.Headers["Content-Type"]; !strings.HasPrefix(got, c.contentType) {
			t.Errorf("%s: Content-Type %q, want %s", c.event, got, c.contentType)
		}
		if got := resp.Headers["Location"]; got != c.location {
			t.Errorf("%s: Location %q, want %q", c.event, got, c.location)
		}
		for k, v := range web.SecurityHeaders() {
			if resp.Headers[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.event, k, resp.Headers[k], v)
			}
		}
	}
}

// TestConfig: config.json says where to sign in, from the environment,
// and names no API URL: the API is the page's own origin. Without a
// managed login (an external issuer) it says nothing, and the page asks
// for a token.
func TestConfig(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want web.Config
	}{
		{map[string]string{setup.EnvAuthURL: cognito.AuthURL + "/", setup.EnvPageClientID: cognito.ClientID, setup.EnvUserScope: "memory/user"},
			web.Config{AuthURL: cognito.AuthURL, ClientID: cognito.ClientID, Scope: "memory/user"}},
		{map[string]string{setup.EnvAuthURL: "", setup.EnvPageClientID: "", setup.EnvUserScope: "memory/user"}, web.Config{}},
	} {
		s, err := setup.Page(func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		resp := httpapitest.Invoke(t, newHandler(s), httpapitest.ReadEvent(t, "page-config.json"))
		var got web.Config
		if err := json.Unmarshal([]byte(resp.Body), &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("config.json: %d %s (%v)", resp.StatusCode, resp.Body, err)
		}
		if got != c.want || strings.Contains(resp.Body, "apiUrl") {
			t.Errorf("environment %v: config.json %s, want %+v", c.env, resp.Body, c.want)
		}
		if resp.Headers["Cache-Control"] != "no-store" || resp.Headers["Content-Type"] != "application/json" {
			t.Errorf("config.json headers %v: want application/json, no-store", resp.Headers)
		}
	}
}

// TestRoutesAreTheTemplates: the function serves exactly the routes
// template.yaml gives it.
func TestRoutesAreTheTemplates(t *testing.T) {
	var inTemplate []string
	for _, r := range httpapitest.LoadSAMTemplate(t).Routes() {
		if r.Function == "PageFunction" {
			inTemplate = append(inTemplate, r.Key)
		}
	}
	if strings.Join(inTemplate, ",") != strings.Join(routes, ",") {
		t.Errorf("template.yaml routes %q to PageFunction, it serves %q", inTemplate, routes)
	}
}

// TestConfigFromStageVariables: as the template deploys it, the page's
// client and the fact API's URL come with the request as the page API's
// stage variables; the environment's client wins where it names one, and
// a managed login without any client signs nobody in.
func TestConfigFromStageVariables(t *testing.T) {
	vars := map[string]string{StageAPIURL: "https://abc.execute-api.eu-west-1.amazonaws.com", StagePageClientID: "fromstage"}
	for _, c := range []struct {
		env  map[string]string
		vars map[string]string
		want web.Config
	}{
		{map[string]string{setup.EnvAuthURL: cognito.AuthURL}, vars,
			web.Config{APIURL: vars[StageAPIURL], AuthURL: cognito.AuthURL, ClientID: "fromstage", Scope: setup.DefaultUserScope}},
		{map[string]string{setup.EnvAuthURL: cognito.AuthURL, setup.EnvPageClientID: cognito.ClientID}, vars,
			web.Config{APIURL: vars[StageAPIURL], AuthURL: cognito.AuthURL, ClientID: cognito.ClientID, Scope: setup.DefaultUserScope}},
		{map[string]string{setup.EnvAuthURL: cognito.AuthURL}, map[string]string{StageAPIURL: vars[StageAPIURL]},
			web.Config{APIURL: vars[StageAPIURL]}},
		{map[string]string{}, vars, web.Config{APIURL: vars[StageAPIURL]}},
	} {
		s, err := setup.Page(func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		ev := httpapitest.ReadEvent(t, "page-config.json")
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(ev, &req); err != nil {
			t.Fatal(err)
		}
		req.StageVariables = c.vars
		payload, _ := json.Marshal(req)
		resp := httpapitest.Invoke(t, newHandler(s), payload)
		var got web.Config
		if err := json.Unmarshal([]byte(resp.Body), &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("config.json: %d %s (%v)", resp.StatusCode, resp.Body, err)
		}
		if got != c.want {
			t.Errorf("environment %v, stage %v: config.json %s, want %+v", c.env, c.vars, resp.Body, c.want)
		}
	}
}
