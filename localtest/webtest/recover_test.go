package webtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/usermemory/usermemory/localtest/token"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/web"
)

// The page recovers: a token that ends brings back Connect with the reason
// and the command that mints a new one; what cannot work is hidden; the
// layout stacks on a phone; a single forget can be undone; keys read as
// stored; every status says what happened.

// hidden reports whether the element with ID id is not rendered (it, or
// an ancestor, is hidden).
func hidden(t *testing.T, ctx context.Context, id string) bool {
	t.Helper()
	return evaluate[bool](t, ctx, fmt.Sprintf(`document.getElementById(%q).getClientRects().length === 0`, id))
}

// actionsHidden fails t when any button that acts on the user's facts is
// shown.
func actionsHidden(t *testing.T, ctx context.Context, when string) {
	t.Helper()
	for _, id := range []string{"download", "forget-all", "edit-form", "facts", "undo"} {
		if !hidden(t, ctx, id) {
			t.Errorf("%s: #%s is shown", when, id)
		}
	}
}

// connectShown waits for the Connect view with reason, and checks that it
// shows command, has the focus on its heading and hides every action.
func connectShown(t *testing.T, ctx context.Context, reason, command string) {
	t.Helper()
	waitText(t, ctx, "#connect-ended", reason)
	waitText(t, ctx, "#connect-command", command)
	if got := evaluate[string](t, ctx, `document.getElementById("connect-command").textContent`); got != command {
		t.Errorf("the command shown is %q, want %q", got, command)
	}
	if !evaluate[bool](t, ctx, `document.getElementById("error").hidden && document.getElementById("signin").hidden`) {
		t.Error("with the Connect view the page shows an error, or offers a sign-in it does not have")
	}
	if id := evaluate[string](t, ctx, `document.activeElement.id`); id != "connect-title" {
		t.Errorf("after the token ended the focus is on %q, want the Connect heading", id)
	}
	actionsHidden(t, ctx, "after the token ended")
}

// mintFor is the stack's token command for user, as the page shows it.
func mintFor(user string) string {
	return "go run ./localtest token -state " + st.Info.StateDir + " --tenant acme --user " + user
}

// TestTokenExpires: without a managed login (an external issuer), a pasted
// token that expires brings back the token form, which says when it
// expired and the command that mints a new one for the same user, with no
// error and no button that acts on the facts.
func TestTokenExpires(t *testing.T) {
	ctx, _ := browser(t)
	tok, err := st.Issuer().Sign(token.Claims{Issuer: st.Info.Issuer, Audience: st.Info.Audience, Subject: "page-xavi",
		TenantClaim: st.Info.TenantClaim, Tenant: "acme", Scopes: []string{st.Info.UserScope}, TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(5 * time.Second)
	if _, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en_GB"}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "UTC"}); err != nil {
		t.Fatal(err)
	}
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "0 of 30 facts")
	if hidden(t, ctx, "download") || hidden(t, ctx, "forget-all") {
		t.Error("after a read succeeded, Download or Forget everything is hidden")
	}
	connectShown(t, ctx, "Your token expired at "+exp.UTC().Format("15:04"), mintFor("page-xavi"))
	audit(t, ctx, "Connect, token expired")
	shot(t, ctx, "14-token-expired")
	phoneWidth(t, ctx, true)
	audit(t, ctx, "Connect, token expired, phone width")
	phoneWidth(t, ctx, false)

	// The command's token shows the facts again.
	run1(t, ctx, "connect again", chromedp.SetValue(chromedp.CSS("#token"), tokenFor(t, "page-xavi", false)),
		chromedp.Click(chromedp.CSS(`#connect-form button[type=submit]`)))
	waitText(t, ctx, "#caps", "0 of 30 facts")
	if !hidden(t, ctx, "connect") {
		t.Error("connected again, the page still shows Connect")
	}
}

// TestTokenRefused: a token the API refuses, on the first read or later
// in the session, brings back Connect with the API's reason and the
// command; no button that acts on the facts is ever shown without a read
// that succeeded.
func TestTokenRefused(t *testing.T) {
	ctx, _ := browser(t)
	// Another audience: the API's authorizer answers 401.
	other, err := st.Issuer().Sign(token.Claims{Issuer: st.Info.Issuer, Audience: "another-client", Subject: "page-wu",
		TenantClaim: st.Info.TenantClaim, Tenant: "acme", Scopes: []string{st.Info.UserScope, st.Info.AdminScope}})
	if err != nil {
		t.Fatal(err)
	}
	run1(t, ctx, "open the page with a token the API refuses", chromedp.Navigate(st.Info.PageURL+"/#token="+other))
	connectShown(t, ctx, "The API refused the token: Unauthorized (401)", mintFor("page-wu")+" --admin")
	if !hidden(t, ctx, "me") {
		t.Error("the facts' view was shown before any read succeeded")
	}
	audit(t, ctx, "Connect, token refused")

	// A session whose token the API refuses later (its key rotated, say):
	// the next call brings back Connect and hides the actions.
	tok := tokenFor(t, "page-wu", false)
	putFact(t, tok, "home_city", "Taipei", "")
	run1(t, ctx, "connect", chromedp.SetValue(chromedp.CSS("#token"), tok),
		chromedp.Click(chromedp.CSS(`#connect-form button[type=submit]`)))
	waitText(t, ctx, "#caps", "1 of 30 facts")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`state.token = %q; true`, other))); err != nil {
		t.Fatal(err)
	}
	run1(t, ctx, "download with a refused token", chromedp.Click(chromedp.CSS("#download")))
	connectShown(t, ctx, "The API refused the token: Unauthorized (401)", mintFor("page-wu")+" --admin")
}

// TestNarrowLayout: below about 480 px a fact's text takes the card's
// width and its buttons go below it; above, they sit beside it. Measured
// from the elements' boxes.
func TestNarrowLayout(t *testing.T) {
	tok := tokenFor(t, "page-lena", false)
	putFact(t, tok, "favourite_breakfast", "toast with butter and orange marmalade, and black coffee", "")
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "1 of 30 facts")
	type boxes struct {
		Item, Main, Actions struct{ Left, Right, Top, Bottom, Width float64 }
	}
	measure := func() boxes {
		const expr = `(() => { const li = document.querySelector('#facts li'); const r = (e) => e.getBoundingClientRect().toJSON();
			return JSON.stringify({item: r(li), main: r(li.querySelector('.fact-main')), actions: r(li.querySelector('.fact-actions'))}); })()`
		var b boxes
		if err := json.Unmarshal([]byte(evaluate[string](t, ctx, expr)), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	wide := measure()
	if wide.Actions.Top >= wide.Main.Bottom {
		t.Errorf("at 1000 px the buttons are below the text (text %+v, buttons %+v), want beside it", wide.Main, wide.Actions)
	}
	phoneWidth(t, ctx, true)
	narrow := measure()
	if narrow.Main.Width < narrow.Item.Width-1 {
		t.Errorf("at 375 px the fact's text is %.0f px wide in a %.0f px item, want the item's width", narrow.Main.Width, narrow.Item.Width)
	}
	if narrow.Actions.Top < narrow.Main.Bottom {
		t.Errorf("at 375 px the buttons (top %.0f) are not below the text (bottom %.0f)", narrow.Actions.Top, narrow.Main.Bottom)
	}
	t.Logf("at 375 px: item %.0f px, text %.0f px wide; at 1000 px: text %.0f px", narrow.Item.Width, narrow.Main.Width, wide.Main.Width)
	audit(t, ctx, "narrow layout")
	shot(t, ctx, "15-narrow")
}

// deletes counts the DELETE requests the page sends for path.
func deletes(ctx context.Context, path string) func() int {
	var mu sync.Mutex
	n := 0
	go func() {
		for ev, err := range chromedp.Events(ctx, network.RequestWillBeSent) {
			if err != nil {
				return
			}
			if ev.Request.Method == http.MethodDelete && strings.HasSuffix(ev.Request.URL, path) {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}
	}()
	return func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestUndoForget: Forget takes the fact out of the list and offers Undo
// for 5 seconds; Undo brings it back and nothing is sent; left alone, the
// DELETE goes after 5 seconds; closing the page in the window still
// sends it.
func TestUndoForget(t *testing.T) {
	tok := tokenFor(t, "page-omar", false)
	putFact(t, tok, "home_city", "Cairo", "")
	putFact(t, tok, "name", "Omar", "")
	putFact(t, tok, "diet", "halal", "")
	ctx, _ := browser(t)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	sent := deletes(ctx, "/v1/me/facts/home_city")
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "3 of 30 facts")

	run1(t, ctx, "forget home_city", chromedp.Click(chromedp.CSS(factSel("home_city", ".fact-forget"))))
	waitText(t, ctx, "#undo-text", "home_city will be forgotten in 5 seconds.")
	waitText(t, ctx, "#caps", "2 of 30 facts")
	if id := evaluate[string](t, ctx, `document.activeElement.id`); id != "undo-button" {
		t.Errorf("after Forget the focus is on %q, want Undo", id)
	}
	audit(t, ctx, "undo toast")
	shot(t, ctx, "16-undo")
	phoneWidth(t, ctx, true)
	audit(t, ctx, "undo toast, phone width")
	phoneWidth(t, ctx, false)
	run1(t, ctx, "undo", chromedp.Click(chromedp.CSS("#undo-button")))
	waitText(t, ctx, "#status", "Not forgotten: home_city = Cairo is kept.")
	waitText(t, ctx, factSel("home_city", ".fact-value"), "Cairo")
	waitText(t, ctx, "#caps", "3 of 30 facts")
	time.Sleep(6 * time.Second) // Past the window: nothing may go.
	if n := sent(); n != 0 {
		t.Errorf("after Undo the page sent %d DELETE of home_city, want none", n)
	}
	if factValues(t, tok, "/v1/me/facts")["home_city"] != "Cairo" {
		t.Error("after Undo the API no longer has home_city")
	}

	// Left alone: the DELETE goes after the window, and the status says so.
	start := time.Now()
	run1(t, ctx, "forget home_city", chromedp.Click(chromedp.CSS(factSel("home_city", ".fact-forget"))))
	waitText(t, ctx, "#status", "Forgot home_city.")
	if took := time.Since(start); took < 5*time.Second {
		t.Errorf("the forget was sent after %s, want the 5 s window first", took)
	}
	if _, ok := factValues(t, tok, "/v1/me/facts")["home_city"]; ok || sent() != 1 {
		t.Errorf("after the window: %d DELETE sent, and the API has home_city: %v; want 1 and gone", sent(), ok)
	}
	if !hidden(t, ctx, "undo") {
		t.Error("after the forget was sent, Undo is still offered")
	}

	// Forgetting a second fact in the window sends the first at once.
	run1(t, ctx, "forget name", chromedp.Click(chromedp.CSS(factSel("name", ".fact-forget"))))
	waitText(t, ctx, "#undo-text", "name will be forgotten")
	run1(t, ctx, "forget diet", chromedp.Click(chromedp.CSS(factSel("diet", ".fact-forget"))))
	waitText(t, ctx, "#undo-text", "diet will be forgotten")
	waitUntil(t, "name forgotten at once", func() bool { _, ok := factValues(t, tok, "/v1/me/facts")["name"]; return !ok })

	// Closing the page in the window still sends the forget (keepalive).
	run1(t, ctx, "leave the page", chromedp.Navigate("about:blank"))
	waitUntil(t, "diet forgotten after the page closed", func() bool { _, ok := factValues(t, tok, "/v1/me/facts")["diet"]; return !ok })
}

// waitUntil polls cond for 10 seconds and fails t when it stays false.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// TestKeysAsStored: the list, the form and the statuses name a fact by its
// key as stored; a key typed otherwise says what it will be stored as,
// and is.
func TestKeysAsStored(t *testing.T) {
	tok := tokenFor(t, "page-ines", false)
	putFact(t, tok, "home_city", "Évora", "")
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "1 of 30 facts")
	if got := evaluate[string](t, ctx, `document.querySelector('#facts li[data-key="home_city"] .fact-label').textContent`); got != "home_city" {
		t.Errorf("the list names home_city %q", got)
	}
	run1(t, ctx, "edit home_city", chromedp.Click(chromedp.CSS(factSel("home_city", ".fact-edit"))))
	if title := evaluate[string](t, ctx, `document.getElementById("edit-title").textContent`); title != "Edit home_city" {
		t.Errorf("the form's title is %q, want Edit home_city", title)
	}
	run1(t, ctx, "cancel", chromedp.Click(chromedp.CSS("#edit-cancel")))

	run1(t, ctx, "type FavouriteColour", chromedp.Click(chromedp.CSS("#edit-key")), chromedp.SendKeys(chromedp.CSS("#edit-key"), "FavouriteColour"))
	waitText(t, ctx, "#edit-key-hint", "Will be stored as favouritecolour")
	audit(t, ctx, "key hint")
	run1(t, ctx, "save", chromedp.SetValue(chromedp.CSS("#edit-value"), "green"), chromedp.Click(chromedp.CSS("#edit-save")))
	waitText(t, ctx, "#status", "Remembered favouritecolour = green.")
	waitText(t, ctx, factSel("favouritecolour", ".fact-label"), "favouritecolour")
	if factValues(t, tok, "/v1/me/facts")["favouritecolour"] != "green" {
		t.Error("the API has no favouritecolour")
	}
	run1(t, ctx, "type a key with punctuation", chromedp.SendKeys(chromedp.CSS("#edit-key"), "Bad key!"))
	waitText(t, ctx, "#edit-key-hint", "A key can hold letters, digits, spaces, hyphens, underscores and dots only.")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("edit-key").value = ""; true`)); err != nil {
		t.Fatal(err)
	}
	run1(t, ctx, "type a stored key", chromedp.SendKeys(chromedp.CSS("#edit-key"), "home_city"))
	if !hidden(t, ctx, "edit-key-hint") {
		t.Error("a key typed as it is stored still shows a hint")
	}
}

// canonicalInputs are keys whose canonical form the page's mirror of
// memory.CanonicalKey must agree on; every character of the Basic
// Multilingual Plane is added between two letters.
var canonicalInputs = []string{
	"FavouriteColour", "home city", "Home-City", "  a..b  ", "a_-_b", "__x__", "Straße", "İstanbul", "ÅNGSTRÖM", "日本語の鍵",
	"e\u0301cole", "a1_2", "x²", "٣٤", "ΣΊΣΥΦΟΣ", "ǅemal", "ＡＢＣ", "😀 smile", "a\u200db", "Ⅻ", "\u00a0nbsp\u00a0", "tab\there", "", "!!!",
}

// assigned reports whether Go's Unicode tables assign r (its category is
// not Cn, unassigned).
func assigned(r rune) bool { return !unicode.Is(unicode.Categories["Cn"], r) }

// TestCanonicalKeyMirror holds the page's canonicalKey to
// memory.CanonicalKey on canonicalInputs and on every character of the
// Basic Multilingual Plane that Go's Unicode tables assign (the
// surrogates aside). A browser whose Unicode is newer than Go's knows
// letters Go does not: for them the page's hint may differ from the key
// the API stores, which the status after saving names.
func TestCanonicalKeyMirror(t *testing.T) {
	inputs := append([]string(nil), canonicalInputs...)
	unassigned := 0
	for r := rune(0); r <= 0xFFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if !assigned(r) {
			unassigned++
			continue
		}
		inputs = append(inputs, "A"+string(r)+"b")
	}
	t.Logf("Unicode %s: %d characters of the plane unassigned, not compared", unicode.Version, unassigned)
	in, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/"), chromedp.WaitVisible(chromedp.CSS("#connect-form")))
	var got []string
	if err := json.Unmarshal([]byte(evaluate[string](t, ctx, `JSON.stringify(`+string(in)+`.map(canonicalKey))`)), &got); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, s := range inputs {
		if want := memory.CanonicalKey(s); got[i] != want {
			if bad++; bad <= 20 {
				t.Errorf("canonicalKey(%q) = %q in the page, %q in Go", s, got[i], want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d keys differ", bad, len(inputs))
	}
	t.Logf("%d keys agree", len(inputs)-bad)
}

// fakeAPI serves GET /v1/me/facts with body and answers every DELETE with
// status del, with CORS for the page: the page's rendering of fields and
// outcomes the local stack does not produce on demand (saidAt, a 404).
func fakeAPI(t *testing.T, body string, del int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Headers", "authorization, content-type")
		w.Header().Set("Access-Control-Allow-Methods", "GET, PUT, POST, DELETE")
		switch {
		case r.Method == http.MethodOptions:
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodGet && r.URL.Path == "/v1/me/facts":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		case r.Method == http.MethodDelete && del == http.StatusNotFound:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"title":"not found","status":404}`))
		case r.Method == http.MethodDelete:
			w.WriteHeader(del)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestWhenSaidAndKept: with saidAt in the API's answer, a kept fact says
// when it was said and kept, a pending one when it was said and when it
// is dropped, and that Keep replaces the stored value of its key; a
// forget or a discard the API answers 404 says nothing was there.
func TestWhenSaidAndKept(t *testing.T) {
	year := time.Now().Year()
	said := time.Date(year, time.March, 3, 19, 31, 0, 0, time.UTC)
	kept := said.Add(4 * time.Minute)
	dropped := said.AddDate(0, 0, 7)
	at := func(t time.Time) string { return t.Format(time.RFC3339) }
	body := fmt.Sprintf(`{"limits":{"maxFacts":30,"maxFactChars":200},
	"facts":[
	 {"key":"role","value":"nurse","updatedAt":%q,"origin":"manual"},
	 {"key":"health_condition","value":"diabetes","updatedAt":%q,"saidAt":%q,"origin":"conversation","evidence":"I have diabetes","category":"health","sourceThreadTitle":"Clinic"}],
	"pending":[
	 {"key":"role","value":"catholic priest","updatedAt":%q,"saidAt":%q,"pendingUntil":%q,"origin":"conversation","evidence":"I'm a catholic priest now","category":"religion"}]}`,
		at(said), at(kept), at(said), at(said), at(said), at(dropped))
	apiURL := fakeAPI(t, body, http.StatusNotFound)
	page := httptest.NewServer(web.NewHandler(web.Config{APIURL: apiURL}))
	t.Cleanup(page.Close)

	ctx, _ := browser(t)
	if _, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en_GB"}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "UTC"}); err != nil {
		t.Fatal(err)
	}
	run1(t, ctx, "open the page", chromedp.Navigate(page.URL+"/#token="+tokenFor(t, "page-sam", false)))
	waitText(t, ctx, "#caps", "2 of 30 facts")
	waitText(t, ctx, factSel("health_condition", ".fact-when"), "said on 3 Mar at 19:31, kept at 19:35")
	pending := `#pending li[data-key="role"] `
	waitText(t, ctx, pending+".fact-when", "said on 3 Mar at 19:31; will be dropped on "+dropped.Format("Mon 2 Jan")+" unless you keep it")
	waitText(t, ctx, pending+".fact-replaces", "Keep replaces role = nurse")
	audit(t, ctx, "said and kept")

	run1(t, ctx, "discard", chromedp.Click(chromedp.CSS(pending+".pending-discard")))
	waitText(t, ctx, "#status", "Nothing to discard: no pending role.")
	run1(t, ctx, "forget", chromedp.Click(chromedp.CSS(factSel("role", ".fact-forget"))))
	press(t, ctx, kb.Escape) // Undo keeps the focus; the window passes.
	waitText(t, ctx, "#status", "Nothing to forget: no fact role.")
}
