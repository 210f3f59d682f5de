package webtest_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/usermemory/usermemory/localtest/token"
)

// The page as a deployed stack serves it, under the API's /app/ (the
// local stack runs PageFunction there), signs in through the token
// issuer's stand-in of Cognito's managed login (token.SignIn): the
// authorization code grant with PKCE and a state.

// signInAs clicks Sign in (or Sign in again, button) on the page, checks
// the request the managed login receives, and signs in as user of the
// tenant acme, which sends the browser back to the page.
func signInAs(t *testing.T, ctx context.Context, button, user string) {
	t.Helper()
	run1(t, ctx, "click "+button, chromedp.WaitVisible(chromedp.CSS("#sign-in")), chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#username")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Path != token.AuthorizePath || q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 ||
		len(q.Get("state")) < 16 || q.Get("redirect_uri") != st.Info.AppURL || q.Get("response_type") != "code" ||
		q.Get("scope") != "openid "+st.Info.UserScope {
		t.Errorf("the page sent the managed login to %s: want /oauth2/authorize, code, S256, a state, the page as redirect_uri and the scope openid %s", loc, st.Info.UserScope)
	}
	run1(t, ctx, "sign in as "+user,
		chromedp.SetValue(chromedp.CSS("#username"), user),
		chromedp.SetValue(chromedp.CSS("#tenant"), "acme"),
		chromedp.Click(chromedp.CSS("#signin")))
}

// storage returns the page's sessionStorage as one string.
func storage(t *testing.T, ctx context.Context) string {
	return evaluate[string](t, ctx, `JSON.stringify(Object.assign({}, sessionStorage))`)
}

// TestSignIn: signed out, the page offers Sign in; the managed login
// sends the browser back with a code, which the page redeems with its
// verifier; the user's facts are shown and edited through the API of the
// same origin; no code stays in the address bar and no refresh token in
// storage; Sign out ends the managed login's session and comes back.
func TestSignIn(t *testing.T) {
	tok := tokenFor(t, "page-zoe", false)
	putFact(t, tok, "name", "Zoe", "")
	putFact(t, tok, "home_city", "Faro", "")
	ctx, dialogs := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.AppURL), chromedp.WaitVisible(chromedp.CSS("#sign-in")))
	if !evaluate[bool](t, ctx, `document.getElementById("connect").hidden && document.getElementById("me").hidden`) {
		t.Error("with a managed login the page still shows the token form, or facts before signing in")
	}
	audit(t, ctx, "signed out, sign-in offered")
	shot(t, ctx, "11-sign-in")

	signInAs(t, ctx, "Sign in", "page-zoe")
	waitText(t, ctx, "#caps", "2 of 30 facts")
	waitText(t, ctx, factSel("home_city", ".fact-value"), "Faro")
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if loc != st.Info.AppURL {
		t.Errorf("after signing in the address is %s, want the page's %s without the code and state", loc, st.Info.AppURL)
	}
	if s := storage(t, ctx); strings.Contains(s, "usermemory.signin") || strings.Contains(s, "refresh") || !strings.Contains(s, `"signedIn\":true`) {
		t.Errorf("sessionStorage after signing in: %s; want the access token only, no verifier, no refresh token", s)
	}
	audit(t, ctx, "signed in")
	shot(t, ctx, "12-signed-in")

	run1(t, ctx, "forget the name", chromedp.Click(chromedp.CSS(factSel("name", ".fact-forget"))))
	waitText(t, ctx, "#caps", "1 of 30 facts")
	waitText(t, ctx, "#status", "Forgot name.") // After the window of Undo.
	if _, ok := factValues(t, tok, "/v1/me/facts")["name"]; ok {
		t.Error("forgotten on the signed-in page, the API still has name")
	}

	run1(t, ctx, "sign out", chromedp.Click(chromedp.CSS("#sign-out")), chromedp.WaitVisible(chromedp.CSS("#sign-in")))
	if s := storage(t, ctx); s != "{}" {
		t.Errorf("sessionStorage after signing out: %s, want nothing", s)
	}
	if !evaluate[bool](t, ctx, `document.getElementById("me").hidden`) {
		t.Error("after signing out the page still shows the facts")
	}
	if dialogs.Load() != 0 {
		t.Errorf("the page opened %d JavaScript dialogs", dialogs.Load())
	}
}

// TestSignInStateIsChecked: an answer of the managed login that this tab
// did not ask for (another state, or none asked) is not redeemed: the page
// says so, offers Sign in, and takes the code out of the address bar.
func TestSignInStateIsChecked(t *testing.T) {
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.AppURL), chromedp.WaitVisible(chromedp.CSS("#sign-in")))
	// A sign-in started in this tab, then an answer with another state.
	run1(t, ctx, "start a sign-in", chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("#username")))
	run1(t, ctx, "come back with a forged answer", chromedp.Navigate(st.Info.AppURL+"?code=forged&state=forged"))
	waitText(t, ctx, "#error", "not one this page asked for")
	if !evaluate[bool](t, ctx, `!document.getElementById("sign-in").hidden && document.getElementById("me").hidden`) {
		t.Error("after a forged answer the page does not offer Sign in, or shows facts")
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); strings.Contains(loc, "code=") {
		t.Errorf("the forged code stays in the address bar: %s", loc)
	}
	if s := storage(t, ctx); s != "{}" {
		t.Errorf("sessionStorage after a forged answer: %s, want nothing (the started sign-in is spent)", s)
	}
	audit(t, ctx, "sign-in refused")
}

// TestSignInExpires: when the access token expires, the page hides the
// facts and their buttons and says the sign-in has expired, with Sign in
// again, not an error; signing in again shows the facts.
func TestSignInExpires(t *testing.T) {
	tok := tokenFor(t, "page-yara", false)
	putFact(t, tok, "home_city", "Braga", "")
	st.SignIn().SetTokenTTL(4 * time.Second)
	t.Cleanup(func() { st.SignIn().SetTokenTTL(time.Hour) })
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.AppURL))
	signInAs(t, ctx, "Sign in", "page-yara")
	waitText(t, ctx, "#caps", "1 of 30 facts")
	st.SignIn().SetTokenTTL(time.Hour)

	waitText(t, ctx, "#signin-title", "Your sign-in has expired")
	waitText(t, ctx, "#status", "Your sign-in has expired: your token expired at ")
	if !evaluate[bool](t, ctx, `document.getElementById("me").hidden && document.getElementById("error").hidden && document.getElementById("sign-out").hidden`) {
		t.Error("after the token expired the page still shows the facts, an error or Sign out")
	}
	if id := evaluate[string](t, ctx, `document.activeElement.id`); id != "sign-in" {
		t.Errorf("after the session ended the focus is on %q, want Sign in again", id)
	}
	audit(t, ctx, "sign-in expired")
	shot(t, ctx, "13-expired")

	signInAs(t, ctx, "Sign in again", "page-yara")
	waitText(t, ctx, "#caps", "1 of 30 facts")
}
