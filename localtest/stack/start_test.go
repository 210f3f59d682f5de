package stack

import (
	"path/filepath"
	"testing"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// TestFactAPIOfTheTemplate resolves template.yaml as the local stack does
// (its issuer in JwtIssuer): of its HTTP APIs, the one with the JWT
// authorizer is the fact API the emulator runs, with the local issuer;
// the page's API, which has none, is served by the same emulator with no
// token needed.
func TestFactAPIOfTheTemplate(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	iss, aud := tmpl.JWTParameters()
	params := map[string]string{}
	for _, p := range iss {
		params[p] = "http://127.0.0.1:9"
	}
	for _, p := range aud {
		params[p] = "local"
	}
	app, err := tmpl.Resolve(samtemplate.Options{Region: DefaultRegion, AccountID: DefaultAccountID, StackName: DefaultStackName, Parameters: params})
	if err != nil {
		t.Fatal(err)
	}
	apis := factAPIs(app)
	if len(apis) != 1 || len(app.APIs) < 2 {
		t.Fatalf("fact APIs %d of %d: want the one with an authorizer of several", len(apis), len(app.APIs))
	}
	for name, a := range apis[0].Authorizers {
		if a.Issuer != "http://127.0.0.1:9" || len(a.Audience) != 1 || a.Audience[0] != "local" {
			t.Errorf("authorizer %s = %+v: want the local issuer and audience", name, a)
		}
	}
	fact, page, err := servedAPIs(app)
	if err != nil {
		t.Fatal(err)
	}
	if fact != apis[0] || page == nil || len(page.Routes) != 1 || page.Routes[0].Key() != "$default" ||
		page.Routes[0].Function != "PageFunction" || page.Routes[0].Authorizer != "NONE" {
		t.Errorf("served: the fact API %v, the page's %+v; want the fact API and the page's one $default route, without an authorizer", fact.LogicalID, page)
	}
	if _, ok := app.Properties["UserPool"]; ok {
		t.Error("the local stack's template makes a user pool: its issuer did not reach JwtIssuer")
	}
}
