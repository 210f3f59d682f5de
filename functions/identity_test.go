package functions_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/claims"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/internal/testenv"
)

// identityResources are the resources the stack makes for its own
// identity, and only then.
var identityResources = []string{"UserPool", "AdminGroup", "UserPoolDomain", "UserPoolResourceServer", "PageClient",
	"PageClientBranding", "GatewayClient", "PreTokenFunction", "PreTokenRole", "PreTokenLogGroup", "PreTokenPermission",
	"PreTokenErrorsAlarm", "PreTokenThrottlesAlarm"}

// TestOwnIdentity evaluates the template with its defaults (JwtIssuer
// empty) in a Region of the model mapping and in one outside it: the
// stack makes its user pool, whose issuer and clients the authorizer
// takes, with the trigger wired as V3_0 and the names the claim code uses.
func TestOwnIdentity(t *testing.T) {
	tmpl := loadStackTemplate(t)
	unmapped := map[string]string{"CheapModelId": "global.amazon.nova-2-lite-v1:0", "CheapFoundationModelId": "amazon.nova-2-lite-v1:0"}
	for _, c := range []struct {
		region string
		params map[string]string
	}{{"eu-west-1", nil}, {"sa-east-1", unmapped}} {
		o := deployment(c.region, c.params)
		if err := tmpl.Check(o); err != nil {
			t.Fatalf("%s: the defaults are refused: %v", c.region, err)
		}
		app := resolve(t, tmpl, o)
		for _, id := range identityResources {
			if app.Properties[id] == nil {
				t.Errorf("%s: no %s with JwtIssuer empty", c.region, id)
			}
		}
		if err := startAll(app); err != nil {
			t.Errorf("%s: %v", c.region, err)
		}
		checkOwnIdentity(t, app)
	}
}

// checkOwnIdentity holds the resolved identity resources of app to the
// authorizer, the claim code and the outputs.
func checkOwnIdentity(t *testing.T, app *samtemplate.App) {
	t.Helper()
	p := app.Properties
	a := app.APIs["HttpApi"].Authorizers["JwtAuthorizer"]
	poolID := fmt.Sprint(app.Outputs["UserPoolId"])
	if a.Issuer != "https://cognito-idp."+strings.Split(poolID, "_")[0]+".amazonaws.com/"+poolID {
		t.Errorf("issuer %s, want the pool's https://cognito-idp.REGION.amazonaws.com/%s", a.Issuer, poolID)
	}
	if want := []string{fmt.Sprint(app.Outputs["PageClientId"]), fmt.Sprint(app.Outputs["GatewayClientId"])}; !slices.Equal(a.Audience, want) {
		t.Errorf("audience %q, want the page's and the gateway's client IDs %q (Cognito's access tokens carry client_id)", a.Audience, want)
	}
	trigger := asMap(get(p["UserPool"], "LambdaConfig", "PreTokenGenerationConfig"))
	fn := app.Functions["PreTokenFunction"]
	if fn == nil || trigger["LambdaVersion"] != "V3_0" || !strings.HasSuffix(fmt.Sprint(trigger["LambdaArn"]), ":function:"+fn.Name) {
		t.Errorf("the pool's trigger %v: want PreTokenFunction, V3_0 (client credentials too)", trigger)
	}
	if p["UserPool"]["UserPoolTier"] != "ESSENTIALS" {
		t.Errorf("UserPoolTier %v: access-token customisation needs ESSENTIALS or PLUS", p["UserPool"]["UserPoolTier"])
	}
	attr := strings.TrimPrefix(claims.TenantAttribute, "custom:")
	if !slices.ContainsFunc(asList(p["UserPool"]["Schema"]), func(s any) bool { return asMap(s)["Name"] == attr && asMap(s)["Mutable"] == false }) {
		t.Errorf("the pool's schema %v has no immutable %s (claims.TenantAttribute)", p["UserPool"]["Schema"], attr)
	}
	if p["AdminGroup"]["GroupName"] != claims.AdminGroup {
		t.Errorf("admin group %v, want claims.AdminGroup %s", p["AdminGroup"]["GroupName"], claims.AdminGroup)
	}
	var scopes []string
	for _, s := range asList(p["UserPoolResourceServer"]["Scopes"]) {
		scopes = append(scopes, fmt.Sprint(p["UserPoolResourceServer"]["Identifier"], "/", asMap(s)["ScopeName"]))
	}
	if want := []string{app.Parameters["UserScope"], app.Parameters["AdminScope"]}; !slices.Equal(scopes, want) {
		t.Errorf("resource server scopes %q, want the routes' %q", scopes, want)
	}
	page := p["PageClient"]
	if page["GenerateSecret"] != false || fmt.Sprint(page["AllowedOAuthFlows"]) != "[code]" ||
		fmt.Sprint(page["CallbackURLs"]) != fmt.Sprint([]any{app.Outputs["PageUrl"]}) || !slices.Contains(asList(page["AllowedOAuthScopes"]), any(app.Parameters["UserScope"])) {
		t.Errorf("PageClient %v: want a public client, code flow, the user scope, called back at PageUrl %v", page, app.Outputs["PageUrl"])
	}
	gw := p["GatewayClient"]
	if gw["GenerateSecret"] != true || fmt.Sprint(gw["AllowedOAuthFlows"]) != "[client_credentials]" || fmt.Sprint(gw["AllowedOAuthScopes"]) != "["+app.Parameters["AdminScope"]+"]" {
		t.Errorf("GatewayClient %v: want a confidential client, client credentials, the admin scope only", gw)
	}
	domain := fmt.Sprint(p["UserPoolDomain"]["Domain"])
	if app.Outputs["AuthUrl"] != "https://"+domain+".auth."+strings.Split(poolID, "_")[0]+".amazoncognito.com" ||
		app.Outputs["TokenUrl"] != fmt.Sprint(app.Outputs["AuthUrl"], "/oauth2/token") || p["UserPoolDomain"]["ManagedLoginVersion"] == nil {
		t.Errorf("domain %s, AuthUrl %v, TokenUrl %v: want the managed login domain's", domain, app.Outputs["AuthUrl"], app.Outputs["TokenUrl"])
	}
	perm := p["PreTokenPermission"]
	if perm["Principal"] != "cognito-idp.amazonaws.com" || perm["SourceArn"] != fmt.Sprint("arn:aws:cognito-idp:", strings.Split(poolID, "_")[0], ":", testAccount, ":userpool/", poolID) {
		t.Errorf("PreTokenPermission %v: want Cognito, from this pool only", perm)
	}
}

// TestDomainPrefix checks the managed login domain's prefix: the stack
// ID's UUID by default, lowercase whatever the stack's name, and the
// parameter's when set; a prefix Cognito refuses is refused at once.
func TestDomainPrefix(t *testing.T) {
	tmpl := loadStackTemplate(t)
	o := deployment("us-east-1", nil)
	o.StackName = "My-Memory"
	o.StackID = "arn:aws:cloudformation:us-east-1:" + testAccount + ":stack/My-Memory/" + stackUUID
	if d := resolve(t, tmpl, o).Properties["UserPoolDomain"]["Domain"]; d != "memory-"+stackUUID {
		t.Errorf("default prefix %v, want memory-%s", d, stackUUID)
	}
	o.Parameters = map[string]string{"AuthDomainPrefix": "acme-memory"}
	if d := resolve(t, tmpl, o).Properties["UserPoolDomain"]["Domain"]; d != "acme-memory" {
		t.Errorf("prefix %v, want the parameter's", d)
	}
	for _, bad := range []string{"Acme", "-acme", "acme-", "acme.memory", strings.Repeat("a", 64)} {
		if tmpl.Check(deployment("us-east-1", map[string]string{"AuthDomainPrefix": bad})) == nil {
			t.Errorf("AuthDomainPrefix %q accepted", bad)
		}
	}
}

// TestExternalIssuer evaluates the template with an issuer given: nothing
// of the identity is made, the authorizer takes the parameters, and the
// audience is required; the stack's own identity keeps the scopes of its
// resource server.
func TestExternalIssuer(t *testing.T) {
	tmpl := loadStackTemplate(t)
	for _, region := range []string{"us-east-1", "sa-east-1"} {
		params := map[string]string{"CheapModelId": "global.amazon.nova-2-lite-v1:0"}
		for k, v := range externalIssuer {
			params[k] = v
		}
		o := deployment(region, params)
		if err := tmpl.Check(o); err != nil {
			t.Fatalf("%s: %v", region, err)
		}
		app := resolve(t, tmpl, o)
		for _, id := range identityResources {
			if app.Properties[id] != nil {
				t.Errorf("%s: %s made with an external issuer", region, id)
			}
		}
		for _, out := range []string{"UserPoolId", "PageClientId", "GatewayClientId", "AuthUrl", "TokenUrl"} {
			if _, ok := app.Outputs[out]; ok {
				t.Errorf("%s: output %s with an external issuer", region, out)
			}
		}
		if app.Outputs["PageUrl"] == nil || app.Outputs["ApiUrl"] == nil {
			t.Errorf("%s: outputs %v: want ApiUrl and PageUrl always", region, app.Outputs)
		}
		if err := startAll(app); err != nil {
			t.Error(err)
		}
	}
	for params, want := range map[string]string{
		"JwtIssuer=https://idp.example":                              "JwtAudience",
		"JwtIssuer=http://idp.example;JwtAudience=a":                 "JwtIssuer",
		"UserScope=read":                                             "UserScope and AdminScope",
		"JwtIssuer=https://idp.example;JwtAudience=a;UserScope=read": "",
	} {
		m := map[string]string{}
		for _, kv := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		err := tmpl.Check(deployment("us-east-1", m))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", params, err, want)
		}
	}
}

// TestCfnLintIdentityModes runs cfn-lint on the template for a Region of
// the model mapping and one outside it, with the stack's own identity
// and with an external issuer. cfn-lint takes every branch of the
// conditions itself; the parameters make the run the deployment's.
func TestCfnLintIdentityModes(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		testenv.Need(t, "cfn-lint is not on PATH: make setup installs it")
	}
	path := filepath.Join(httpapitest.Root(t), "template.yaml")
	for _, params := range [][]string{
		{"AlarmEmail=ops@example.com"},
		{"JwtIssuer=" + externalIssuer["JwtIssuer"], "JwtAudience=" + externalIssuer["JwtAudience"], "CheapModelId=global.amazon.nova-2-lite-v1:0"},
	} {
		args := append([]string{"--include-checks", "I", "--regions", "us-east-1", "sa-east-1", "--parameters"}, params...)
		out, err := exec.Command(bin, append(args, "--", path)...).CombinedOutput()
		if err != nil {
			t.Errorf("cfn-lint %v: %v\n%s", params, err, out)
		}
	}
}
