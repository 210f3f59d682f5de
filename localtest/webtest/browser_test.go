package webtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/testenv"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/token"
)

// The browser tests run the page, served by the local stack, in Debian's
// headless Chromium against the real fact API of the stack. A screenshot
// of every state is kept in test-artifacts/browser; -update-docs also
// writes web/README.md's screenshots to docs/images, from realistic facts.
// axe-core (package.json, installed from package-lock.json by `npm ci`)
// audits every view; any failed request of the page fails the test.

var updateDocs = flag.Bool("update-docs", false, "write web/README.md's screenshots of the page to docs/images")

var (
	st        *stack.Stack
	chromium  string
	artifacts string
	axeSource string
	httpc     = &http.Client{Timeout: 30 * time.Second}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	chromium, err = findChromium()
	if err == nil {
		err = motoserver.Installed()
	}
	if err == nil {
		axeSource, err = loadAxe()
	}
	if err != nil {
		// Without Chromium, moto_server or axe-core the tests are skipped,
		// or fail when services are required (make test, CI).
		if testenv.Required() {
			fmt.Fprintln(os.Stderr, "web: the browser tests need Chromium, moto_server and axe-core, and services are required here:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "web: skipped: the browser tests need Chromium, moto_server and axe-core, and", err)
		return 0
	}
	artifacts, _ = filepath.Abs(filepath.Join("..", "..", "test-artifacts", "browser"))
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	state, err := os.MkdirTemp("", "usermemory-web")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(state)
	st, err = stack.Start(context.Background(), stack.Options{StateDir: state})
	if err != nil {
		fmt.Fprintln(os.Stderr, "web: the local stack did not start:", err)
		return 1
	}
	defer st.Close()
	return m.Run()
}

func findChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH: install Debian's package: apt-get install -y chromium (make test does it)")
}

// axePath is where `npm ci` installs axe-core, from this package's folder.
const axePath = "node_modules/axe-core/axe.min.js"

// loadAxe returns the source of axe-core, installed from the lockfile by
// `npm ci` (the Makefile's browser step) or, when it is missing and npm is
// on PATH, by running it here.
func loadAxe() (string, error) {
	if _, err := os.Stat(axePath); err != nil {
		if _, lookErr := exec.LookPath("npm"); lookErr != nil {
			return "", fmt.Errorf("no %s and no npm: run npm ci --prefix localtest/webtest (make test does it)", axePath)
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("npm ci in localtest/webtest: %v: %s", err, out)
		}
	}
	b, err := os.ReadFile(axePath)
	return string(b), err
}

func tokenFor(t *testing.T, user string, admin bool) string {
	t.Helper()
	scopes := []string{st.Info.UserScope}
	if admin {
		scopes = append(scopes, st.Info.AdminScope)
	}
	tok, err := st.Issuer().Sign(token.Claims{
		Issuer: st.Info.Issuer, Audience: st.Info.Audience, Subject: user,
		TenantClaim: st.Info.TenantClaim, Tenant: "acme", Scopes: scopes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// api calls the fact API as the holder of tok and returns the status and
// the decoded body.
func api(t *testing.T, tok, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, st.Info.APIURL+path, rd)
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func factValues(t *testing.T, tok, path string) map[string]string {
	t.Helper()
	status, body := api(t, tok, http.MethodGet, path, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, status, body)
	}
	out := map[string]string{}
	facts, _ := body["facts"].([]any)
	for _, f := range facts {
		m := f.(map[string]any)
		out[m["key"].(string)] = m["value"].(string)
	}
	return out
}

// browser starts a headless Chromium for one test and returns its context
// and a counter of JavaScript dialogs (alert, confirm) the page opened.
func browser(t *testing.T) (context.Context, *atomic.Int32) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1000, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelC := chromedp.NewContext(actx)
	// The first action starts the browser; it must not run under a
	// timeout, which would stop the whole browser when it ends.
	if err := chromedp.Do(bctx); err != nil {
		cancelC()
		cancelA()
		t.Fatalf("chromium did not start: %v", err)
	}
	ctx, cancelT := context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	var dialogs atomic.Int32
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range events {
			if err != nil {
				return
			}
			dialogs.Add(1)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	watchRequests(t, ctx)
	return ctx, &dialogs
}

// watchRequests fails t, when it ends, if a request of the page failed to
// load or one for the page's own files (the page, its script, style and
// icon) was answered with an error status. The fact API's 4xx answers to
// bad input are part of the tests, not failures.
func watchRequests(t *testing.T, ctx context.Context) {
	var mu sync.Mutex
	var failed []string
	add := func(s string) { mu.Lock(); failed = append(failed, s); mu.Unlock() }
	go func() {
		for ev, err := range chromedp.Events(ctx, network.LoadingFailed) {
			if err != nil {
				return
			}
			if !ev.Canceled {
				add(fmt.Sprintf("%s request %s: %s", ev.Type, ev.RequestID, ev.ErrorText))
			}
		}
	}()
	go func() {
		for ev, err := range chromedp.Events(ctx, network.ResponseReceived) {
			if err != nil {
				return
			}
			if r := ev.Response; r != nil && r.Status >= 400 && (strings.HasPrefix(r.URL, st.Info.PageURL) || strings.HasPrefix(r.URL, st.Info.AppURL)) {
				add(fmt.Sprintf("%s: %d", r.URL, r.Status))
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range failed {
			t.Errorf("failed request: %s", f)
		}
	})
}

// axeTags are the rules axe-core runs: WCAG 2.0 and 2.1, levels A and AA,
// and its best practices.
const axeTags = `["wcag2a","wcag2aa","wcag21a","wcag21aa","best-practice"]`

// audit runs axe-core on the page as it is now and fails t for every
// violation, naming the view, the rule, its impact and the nodes.
func audit(t *testing.T, ctx context.Context, view string) {
	t.Helper()
	if !evaluate[bool](t, ctx, `typeof axe !== "undefined"`) {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeSource+";true")); err != nil {
			t.Fatalf("%s: inject axe-core: %v", view, err)
		}
	}
	expr := `axe.run(document, {runOnly: {type: "tag", values: ` + axeTags + `}, resultTypes: ["violations"]})` +
		`.then(r => JSON.stringify({passed: r.passes.length, violations: r.violations.map(v => ` +
		`({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" "))}))}))`
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe.run: %v", view, err)
	}
	var res struct {
		Passed     int
		Violations []struct {
			ID, Impact, Help string
			Nodes            []string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%s: axe's answer %q: %v", view, out, err)
	}
	// A run that checked (almost) nothing proves nothing: the page has
	// headings, landmarks, buttons and text to check.
	if res.Passed < 10 {
		t.Errorf("axe, view %s: only %d rules passed; the audit did not run on the page", view, res.Passed)
	}
	for _, v := range res.Violations {
		t.Errorf("axe, view %s: %s (%s): %s, on %v", view, v.ID, v.Impact, v.Help, v.Nodes)
	}
	t.Logf("axe, view %s: %d rules passed, %d violated", view, res.Passed, len(res.Violations))
}

// phoneWidth emulates a narrow phone (375 CSS pixels wide) until undone.
func phoneWidth(t *testing.T, ctx context.Context, on bool) {
	t.Helper()
	var err error
	if on {
		_, err = chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: 375, Height: 812, DeviceScaleFactor: 2, Mobile: true})
	} else {
		_, err = chromedp.Call(ctx, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// shot keeps a screenshot of the page in the artifacts and, with
// -update-docs, as docs/images/DOC.png when doc is not empty.
func shot(t *testing.T, ctx context.Context, name string, doc ...string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(artifacts, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range doc {
		if *updateDocs {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", "images", d+".png"), buf, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func run1(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitText waits until the text of sel contains want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		short, cancel := context.WithTimeout(ctx, time.Second)
		text, err := chromedp.Run(short, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
		cancel()
		if err == nil {
			got = text
			if strings.Contains(got, want) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("text of %s is %q, want it to contain %q", sel, got, want)
}

// evaluate runs a JavaScript expression in the page and returns its value.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// factField returns one field of the fact key of the holder of tok, as
// GET /v1/me/facts gives it; "" when absent.
func factField(t *testing.T, tok, key, field string) string {
	t.Helper()
	_, body := api(t, tok, http.MethodGet, "/v1/me/facts", "")
	facts, _ := body["facts"].([]any)
	for _, f := range facts {
		if m := f.(map[string]any); m["key"] == key {
			v, _ := m[field].(string)
			return v
		}
	}
	return ""
}

func factSel(key, part string) string {
	return fmt.Sprintf(`#facts li[data-key=%q] %s`, key, part)
}

// putFact sets key to value for the holder of tok through the fact API;
// origin, when not empty, is the body's origin.
func putFact(t *testing.T, tok, key, value, origin string) {
	t.Helper()
	body := map[string]string{"value": value}
	if origin != "" {
		body["origin"] = origin
	}
	b, _ := json.Marshal(body)
	if status, out := api(t, tok, http.MethodPut, "/v1/me/facts/"+key, string(b)); status != http.StatusOK {
		t.Fatalf("PUT %s: %d %v", key, status, out)
	}
}

// pageTitle is the title of the thread the page's learned facts come from.
const pageTitle = "Night shifts and sleep"

// learnAna has the extractor learn, from one message of a conversation,
// a lasting fact, a temporary one and a fact about health, which waits
// for the user's yes; each quotes the user's words.
func learnAna(t *testing.T, tok, user string) {
	t.Helper()
	learn(t, tok, user, "th-page-1", pageTitle,
		"By the way, I work as a nurse on night shifts. I have asthma, and I'm in Paris for a conference until Friday.", "role",
		op{Op: "SET", Key: "health_condition", Value: "asthma", Evidence: "I have asthma", Category: "health"},
		op{Op: "SET", Key: "current_city", Value: "Paris", Evidence: "I'm in Paris for a conference until Friday", ValidUntil: nextFriday().Format(time.DateOnly)},
		op{Op: "SET", Key: "role", Value: "nurse", Evidence: "I work as a nurse on night shifts"})
}

// TestMemoryPage runs the page on realistic facts, one of each origin, a
// temporary one and one that waits for the user's yes, and writes the
// README's screenshot from them (-update-docs). The reader is British:
// the end date reads "until Fri 4 Dec".
func TestMemoryPage(t *testing.T) {
	user := "page-ana"
	tok := tokenFor(t, user, false)
	for _, kv := range [][2]string{{"name", "Ana"}, {"home_city", "Lisbon"}, {"preferred_language", "Portuguese"}} {
		putFact(t, tok, kv[0], kv[1], "")
	}
	// A fact the user approved through the chat's remember tool, as a
	// gateway forwards it.
	putFact(t, tok, "diet", "vegetarian", "remember_tool")
	// Facts learned from a conversation: the gateway's message goes
	// through the queue, the extractor and the Bedrock stand-in.
	learnAna(t, tok, user)
	ctx, dialogs := browser(t)
	if _, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en_GB"}); err != nil {
		t.Fatal(err)
	}

	// Load: the facts written through the API and the extraction, with the caps.
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "6 of 30 facts")
	waitText(t, ctx, factSel("home_city", ".fact-value"), "Lisbon")
	// Each fact says why it is remembered: the user's own words for a
	// learned fact, with the thread named by its title and the date (its
	// ID only in the tooltip); its origin for the others.
	waitText(t, ctx, factSel("role", ".fact-meta"), "You said: “I work as a nurse on night shifts” in “"+pageTitle+"”")
	// When it was said, if the API says (saidAt), else when it was learned.
	if factField(t, tok, "role", "saidAt") != "" {
		waitText(t, ctx, factSel("role", ".fact-when"), "said on ")
	} else {
		waitText(t, ctx, factSel("role", ".fact-when"), "learned on ")
	}
	// A temporary fact shows its last day.
	waitText(t, ctx, factSel("current_city", ".fact-until"), "until "+nextFriday().Format("Mon 2 Jan"))
	if n := evaluate[int](t, ctx, `document.querySelectorAll("#facts .fact-until").length`); n != 1 {
		t.Errorf("%d facts show an end date, want the temporary one only", n)
	}
	// The fact about health waits in its own section, not among the facts.
	waitText(t, ctx, "#pending-title", "Waiting for your yes")
	waitText(t, ctx, `#pending li[data-key="health_condition"]`, "asthma")
	waitText(t, ctx, `#pending li[data-key="health_condition"] .fact-category`, "Health")
	waitText(t, ctx, `#pending li[data-key="health_condition"] .fact-meta`, "You said: “I have asthma”")
	waitText(t, ctx, `#pending li[data-key="health_condition"] .fact-when`, "; will be dropped on ")
	waitText(t, ctx, `#pending li[data-key="health_condition"] .fact-when`, " unless you keep it")
	if evaluate[bool](t, ctx, `document.querySelector('#facts li[data-key="health_condition"]') !== null`) {
		t.Error("the pending fact is among the facts")
	}
	waitText(t, ctx, factSel("name", ".fact-meta"), "You set this on ")
	waitText(t, ctx, factSel("diet", ".fact-meta"), "You asked me to remember this on ")
	if tip := evaluate[string](t, ctx, `document.querySelector('#facts li[data-key="role"] .fact-meta').title`); tip != "Thread th-page-1" {
		t.Errorf("tooltip of the learned fact = %q, want Thread th-page-1", tip)
	}
	if text := evaluate[string](t, ctx, `document.getElementById("facts").innerText`); strings.Contains(text, "th-page-1") {
		t.Errorf("the page shows the raw thread ID: %q", text)
	}
	// A fact is named by its key as stored, as the chat and the API name it.
	for _, key := range []string{"home_city", "preferred_language", "role", "name"} {
		if got := evaluate[string](t, ctx, fmt.Sprintf(`document.querySelector('#facts li[data-key=%q] .fact-label').textContent`, key)); got != key {
			t.Errorf("label of %s = %q, want the key", key, got)
		}
	}
	// Every button names the fact it acts on.
	for sel, want := range map[string]string{factSel("home_city", ".fact-edit"): "Edit home_city", factSel("home_city", ".fact-forget"): "Forget home_city",
		factSel("preferred_language", ".fact-edit"):                 "Edit preferred_language",
		`#pending li[data-key="health_condition"] .pending-keep`:    "Keep health_condition",
		`#pending li[data-key="health_condition"] .pending-discard`: "Discard health_condition"} {
		if got := evaluate[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-label")`, sel)); got != want {
			t.Errorf("accessible name of %s = %q, want %q", sel, got, want)
		}
	}
	// A user token shows no bar of views: a lone tab is no tab.
	if !evaluate[bool](t, ctx, `document.getElementById("views").hidden`) {
		t.Error("a user token shows the bar of views")
	}
	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(url, "token=") {
		t.Errorf("the token stays in the address bar: %s", url)
	}
	audit(t, ctx, "user, with a pending fact")
	shot(t, ctx, "1-loaded", "memory-page")
	phoneWidth(t, ctx, true)
	audit(t, ctx, "user, phone width")
	if evaluate[bool](t, ctx, `document.documentElement.scrollWidth > document.documentElement.clientWidth`) {
		t.Error("at phone width the page scrolls sideways")
	}
	shot(t, ctx, "1-phone")
	phoneWidth(t, ctx, false)

	// Edit one: the form names the fact by its label and shows its key;
	// the new value is what the API returns afterwards.
	run1(t, ctx, "edit home_city", chromedp.Click(chromedp.CSS(factSel("home_city", ".fact-edit"))))
	if title, key := evaluate[string](t, ctx, `document.getElementById("edit-title").textContent`), evaluate[string](t, ctx, `document.getElementById("edit-key").value`); title != "Edit home_city" || key != "home_city" {
		t.Errorf("edit form: title %q, key %q; want Edit home_city and home_city", title, key)
	}
	run1(t, ctx, "save home_city",
		chromedp.SetValue(chromedp.CSS("#edit-value"), "Porto"),
		chromedp.Click(chromedp.CSS("#edit-save")))
	waitText(t, ctx, "#status", "Changed home_city = Porto (it was Lisbon).")
	waitText(t, ctx, factSel("home_city", ".fact-value"), "Porto")
	if got := factValues(t, tok, "/v1/me/facts")["home_city"]; got != "Porto" {
		t.Errorf("after the edit the API says home_city = %q, want Porto", got)
	}
	shot(t, ctx, "2-edited")

	// A fact with an end date, from the form: the API has the date, the
	// page shows it.
	until := time.Now().UTC().AddDate(0, 0, 3)
	run1(t, ctx, "save a temporary fact",
		chromedp.SetValue(chromedp.CSS("#edit-key"), "parking_spot"),
		chromedp.SetValue(chromedp.CSS("#edit-value"), "level -2, B14"),
		chromedp.SetValue(chromedp.CSS("#edit-until"), until.Format(time.DateOnly)),
		chromedp.Click(chromedp.CSS("#edit-save")))
	waitText(t, ctx, "#status", "Remembered parking_spot = level -2, B14.")
	waitText(t, ctx, factSel("parking_spot", ".fact-until"), "until "+until.Format("Mon 2 Jan"))
	if got := factField(t, tok, "parking_spot", "validUntil"); got != until.Format(time.DateOnly) {
		t.Errorf("the API says parking_spot's validUntil = %q, want %s", got, until.Format(time.DateOnly))
	}
	// A browser without a date input lets any text into the field: the
	// page sends only a date, and says so.
	evaluate[string](t, ctx, `document.getElementById("edit-until").type = "text";
		window.putsSent = 0;
		const sendFetch = window.fetch;
		window.fetch = (url, opts) => { if (opts && opts.method === "PUT") window.putsSent++; return sendFetch(url, opts); };
		"counting"`)
	run1(t, ctx, "save with a time as the end date",
		chromedp.SetValue(chromedp.CSS("#edit-key"), "trip"),
		chromedp.SetValue(chromedp.CSS("#edit-value"), "Rome"),
		chromedp.SetValue(chromedp.CSS("#edit-until"), until.Format(time.RFC3339)),
		chromedp.Click(chromedp.CSS("#edit-save")))
	waitText(t, ctx, "#edit-error", "Give the last day as a date")
	if sent := evaluate[int](t, ctx, `window.putsSent`); sent != 0 {
		t.Errorf("a time as the end date: the page sent %d PUTs, want none", sent)
	}
	if got := factValues(t, tok, "/v1/me/facts")["trip"]; got != "" {
		t.Errorf("a time as the end date: the API holds trip = %q, want nothing stored", got)
	}
	evaluate[string](t, ctx, `document.getElementById("edit-until").type = "date"; document.getElementById("edit-form").reset(); "reset"`)

	// Discard the pending fact: it is gone, and never became a fact.
	run1(t, ctx, "discard the pending fact", chromedp.Click(chromedp.CSS(`#pending li[data-key="health_condition"] .pending-discard`)))
	waitText(t, ctx, "#status", "Discarded health_condition = asthma.")
	if !evaluate[bool](t, ctx, `document.getElementById("pending-card").hidden`) {
		t.Error("with nothing pending the page still shows the pending section")
	}
	if len(pendingValues(t, tok)) != 0 || factValues(t, tok, "/v1/me/facts")["health_condition"] != "" {
		t.Error("after Discard the API still holds health_condition")
	}

	// A value over the cap: the API's userMessage is shown, nothing stored.
	run1(t, ctx, "save a too-long value",
		chromedp.SetValue(chromedp.CSS("#edit-key"), "bio"),
		chromedp.SetValue(chromedp.CSS("#edit-value"), strings.Repeat("a", 250)),
		chromedp.Click(chromedp.CSS("#edit-save")))
	waitText(t, ctx, "#edit-error", "too long")
	if _, ok := factValues(t, tok, "/v1/me/facts")["bio"]; ok {
		t.Error("a too-long value was stored")
	}
	shot(t, ctx, "3-too-long")

	// A name the canonical form would rewrite: the API's userMessage, nothing stored.
	run1(t, ctx, "save under a name with punctuation",
		chromedp.SetValue(chromedp.CSS("#edit-key"), "Favourite food!"),
		chromedp.SetValue(chromedp.CSS("#edit-value"), "pastéis de nata"),
		chromedp.Click(chromedp.CSS("#edit-save")))
	waitText(t, ctx, "#edit-error", "can hold letters, digits, spaces, hyphens, underscores and dots only")
	if _, ok := factValues(t, tok, "/v1/me/facts")["favourite_food"]; ok {
		t.Error("a key with punctuation was stored under favourite_food")
	}

	// Forget one: it leaves the list at once, the API after the window of Undo.
	run1(t, ctx, "forget the name", chromedp.Click(chromedp.CSS(factSel("name", ".fact-forget"))))
	waitText(t, ctx, "#caps", "6 of 30 facts")
	waitText(t, ctx, "#status", "Forgot name.")
	if _, ok := factValues(t, tok, "/v1/me/facts")["name"]; ok {
		t.Error("the API still has the forgotten fact")
	}
	shot(t, ctx, "4-forgot-one")

	// Forget all, behind a confirmation: cancel first, then confirm.
	run1(t, ctx, "cancel forget all",
		chromedp.Click(chromedp.CSS("#forget-all")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-ok")))
	audit(t, ctx, "confirm forget all")
	shot(t, ctx, "5-confirm-forget-all")
	run1(t, ctx, "cancel", chromedp.Click(chromedp.CSS("#confirm-cancel")), chromedp.WaitNotVisible(chromedp.CSS("#confirm")))
	if n := len(factValues(t, tok, "/v1/me/facts")); n != 6 {
		t.Fatalf("after cancel: %d facts, want 6", n)
	}
	run1(t, ctx, "confirm forget all",
		chromedp.Click(chromedp.CSS("#forget-all")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-ok")),
		chromedp.Click(chromedp.CSS("#confirm-ok")))
	waitText(t, ctx, "#caps", "0 of 30 facts")
	waitText(t, ctx, "#status", "Forgot all 6 facts.")
	waitText(t, ctx, "#empty", "Nothing remembered yet")
	audit(t, ctx, "user, no fact")
	if n := len(factValues(t, tok, "/v1/me/facts")); n != 0 {
		t.Errorf("after forget all: %d facts", n)
	}
	shot(t, ctx, "6-forgot-all")
	if dialogs.Load() != 0 {
		t.Errorf("the page opened %d JavaScript dialogs", dialogs.Load())
	}
}

// TestAdminView: an admin reads a user's facts and pending facts (without
// Keep or Discard: that is the user's consent) and erases the user.
func TestAdminView(t *testing.T) {
	userTok := tokenFor(t, "page-bob", false)
	for k, v := range map[string]string{"name": "Bob", "role": "nurse"} {
		if status, _ := api(t, userTok, http.MethodPut, "/v1/me/facts/"+k, fmt.Sprintf(`{"value":%q}`, v)); status != http.StatusOK {
			t.Fatalf("PUT %s: %d", k, status)
		}
	}
	learn(t, userTok, "page-bob", "th-bob-1", "Union meeting", "I'm a member of the nurses' union.", "union",
		op{Op: "SET", Key: "union", Value: "nurses' union", Evidence: "I'm a member of the nurses' union", Category: "union_membership"})
	ctx, _ := browser(t)

	// A user token shows no admin tab.
	run1(t, ctx, "open as a user", chromedp.Navigate(st.Info.PageURL+"/#token="+userTok))
	waitText(t, ctx, "#caps", "2 of 30 facts")
	if !evaluate[bool](t, ctx, `document.getElementById("tab-admin").hidden`) {
		t.Error("a user token shows the admin tab")
	}
	audit(t, ctx, "user")

	adminTok := tokenFor(t, "page-admin", true)
	run1(t, ctx, "open as an admin",
		chromedp.Navigate(st.Info.PageURL+"/?admin#token="+adminTok),
		chromedp.WaitVisible(chromedp.CSS("#tab-admin")),
		chromedp.Click(chromedp.CSS("#tab-admin")),
		chromedp.SetValue(chromedp.CSS("#lookup-user"), "page-bob"),
		chromedp.Click(chromedp.CSS(`#lookup-form button[type=submit]`)))
	waitText(t, ctx, "#admin-caps", "page-bob: 2 of 30 facts")
	waitText(t, ctx, "#admin-facts", "nurse")
	// An admin reads about the user: no "you" for the user's own acts.
	waitText(t, ctx, `#admin-facts li[data-key="role"] .fact-meta`, "Set by hand on ")
	waitText(t, ctx, `#admin-pending li[data-key="union"]`, "nurses' union")
	waitText(t, ctx, `#admin-pending li[data-key="union"] .fact-meta`, "The user said: “I'm a member of the nurses' union”")
	waitText(t, ctx, `#admin-pending li[data-key="union"] .fact-when`, " unless the user keeps it")
	if n := evaluate[int](t, ctx, `document.querySelectorAll("#admin-pending button").length`); n != 0 {
		t.Errorf("the admin view offers %d buttons on a pending fact, want none", n)
	}
	audit(t, ctx, "admin, with a pending fact")
	phoneWidth(t, ctx, true)
	audit(t, ctx, "admin, phone width")
	phoneWidth(t, ctx, false)
	shot(t, ctx, "7-admin-lookup")

	run1(t, ctx, "erase",
		chromedp.Click(chromedp.CSS("#erase")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-ok")))
	waitText(t, ctx, "#confirm-text", "Erasure removes every fact")
	shot(t, ctx, "8-confirm-erase", "memory-page-erase")
	run1(t, ctx, "confirm erase", chromedp.Click(chromedp.CSS("#confirm-ok")))
	waitText(t, ctx, "#status", "Erased page-bob: 2 facts removed.")
	// The erasure's answer dates what may remain (backups, queued messages).
	waitText(t, ctx, "#status", "Backups may hold their data until ")
	waitText(t, ctx, "#status", "and messages still queued until ")
	if n := len(factValues(t, userTok, "/v1/me/facts")); n != 0 {
		t.Errorf("after erasure the user has %d facts", n)
	}
	shot(t, ctx, "9-erased")
}

// TestValuesAreText: a stored value that looks like HTML is shown as text
// and never runs.
func TestValuesAreText(t *testing.T) {
	tok := tokenFor(t, "page-eve", false)
	const hostile = `<img src=x onerror=alert(1)>`
	putFact(t, tok, "note", hostile, "")
	ctx, dialogs := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "1 of 30 facts")
	imgs := evaluate[int](t, ctx, `document.querySelectorAll("#facts img").length`)
	shown := evaluate[string](t, ctx, `document.querySelector('#facts li[data-key="note"] .fact-value').textContent`)
	if imgs != 0 || shown != hostile || dialogs.Load() != 0 {
		t.Errorf("hostile value: %d img elements, text %q, %d dialogs; want 0, the raw text, 0", imgs, shown, dialogs.Load())
	}
}

// TestNoToken: without a token the page asks for one, and passes axe at
// desktop and phone widths.
func TestNoToken(t *testing.T) {
	ctx, _ := browser(t)
	run1(t, ctx, "open the page without a token", chromedp.Navigate(st.Info.PageURL+"/"), chromedp.WaitVisible(chromedp.CSS("#connect-form")))
	audit(t, ctx, "no token")
	phoneWidth(t, ctx, true)
	audit(t, ctx, "no token, phone width")
	shot(t, ctx, "0-no-token-phone")
}

// press sends keys to the element that has the focus, with modifiers.
func press(t *testing.T, ctx context.Context, keys string, mods ...chromedp.Modifier) {
	t.Helper()
	var opts []chromedp.KeyOption
	for _, m := range mods {
		opts = append(opts, chromedp.KeyModifiers(m))
	}
	run1(t, ctx, fmt.Sprintf("press %q", keys), chromedp.KeyEvent(keys, opts...))
}

// tabTo presses Tab until the focused element's accessible name (its
// aria-label or its text) is name, and fails t after 40 presses.
func tabTo(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	const focused = `(e => e ? (e.getAttribute("aria-label") || e.textContent.trim()) : "")(document.activeElement)`
	var seen []string
	for range 40 {
		press(t, ctx, kb.Tab)
		got := evaluate[string](t, ctx, focused)
		if got == name {
			return
		}
		seen = append(seen, got)
	}
	t.Fatalf("Tab never reached %q; the focus went through %q", name, seen)
}

// TestKeyboard: the page works from the keyboard alone: Tab reaches each
// fact's buttons, Enter on Keep keeps a pending fact, Enter edits, Enter
// in the form saves, and Space on Forget forgets.
func TestKeyboard(t *testing.T) {
	tok := tokenFor(t, "page-dan", false)
	putFact(t, tok, "home_city", "Lisbon", "")
	putFact(t, tok, "name", "Dan", "")
	learn(t, tok, "page-dan", "th-dan-1", "Pharmacy", "I take insulin every morning.", "medication",
		op{Op: "SET", Key: "medication", Value: "insulin", Evidence: "I take insulin every morning", Category: "health"})
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "2 of 30 facts")

	tabTo(t, ctx, "Keep medication")
	press(t, ctx, kb.Enter)
	waitText(t, ctx, "#status", "Kept medication = insulin: the assistant may use it from now on.")
	waitText(t, ctx, "#caps", "3 of 30 facts")
	if got := factValues(t, tok, "/v1/me/facts")["medication"]; got != "insulin" || len(pendingValues(t, tok)) != 0 {
		t.Errorf("after Enter on Keep the API says medication = %q with %v pending; want insulin and none", got, pendingValues(t, tok))
	}
	if id := evaluate[string](t, ctx, `document.activeElement.id`); id != "caps" {
		t.Errorf("after keeping, the focus is on %q, want the count of facts (caps)", id)
	}

	tabTo(t, ctx, "Edit home_city")
	press(t, ctx, kb.Enter)
	if id := evaluate[string](t, ctx, `document.activeElement.id`); id != "edit-value" {
		t.Fatalf("after Enter on Edit home_city the focus is on %q, want edit-value", id)
	}
	press(t, ctx, "a", chromedp.ModifierCtrl)
	press(t, ctx, "Porto")
	press(t, ctx, kb.Enter)
	waitText(t, ctx, "#status", "Changed home_city = Porto (it was Lisbon).")
	if got := factValues(t, tok, "/v1/me/facts")["home_city"]; got != "Porto" {
		t.Errorf("after the edit by keyboard the API says home_city = %q, want Porto", got)
	}

	tabTo(t, ctx, "Forget name")
	press(t, ctx, " ")
	waitText(t, ctx, "#caps", "2 of 30 facts")
	if id := evaluate[string](t, ctx, `document.activeElement.id`); id != "undo-button" {
		t.Errorf("after Space on Forget the focus is on %q, want Undo", id)
	}
	waitText(t, ctx, "#status", "Forgot name.") // After the window of Undo.
	if _, ok := factValues(t, tok, "/v1/me/facts")["name"]; ok {
		t.Error("Space on Forget name did not forget it")
	}
	if id := evaluate[string](t, ctx, `document.activeElement.id`); id != "caps" {
		t.Errorf("after forgetting, the focus is on %q, want the count of facts (caps)", id)
	}
	audit(t, ctx, "user, after keyboard use")
}

// TestDatesInReadersLocale: the page writes when a fact was learned in the
// reader's locale and time zone, here German in Lisbon, with the exact
// instant in a <time> element.
func TestDatesInReadersLocale(t *testing.T) {
	tok := tokenFor(t, "page-carla", false)
	if status, body := api(t, tok, http.MethodPut, "/v1/me/facts/home_city", `{"value":"Lisbon"}`); status != http.StatusOK {
		t.Fatalf("PUT: %d %v", status, body)
	}
	_, body := api(t, tok, http.MethodGet, "/v1/me/facts", "")
	updated, err := time.Parse(time.RFC3339Nano, body["facts"].([]any)[0].(map[string]any)["updatedAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	ctx, _ := browser(t)
	if _, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "de_DE"}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Lisbon"}); err != nil {
		t.Fatal(err)
	}
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	// German medium date and short time: 01.12.2026, 14:16.
	want := updated.In(lisbon).Format("02.01.2006, 15:04")
	waitText(t, ctx, factSel("home_city", ".fact-meta time"), want)
	attr := evaluate[string](t, ctx, `document.querySelector('#facts li[data-key="home_city"] time').dateTime`)
	if at, err := time.Parse(time.RFC3339Nano, attr); err != nil || !at.Equal(updated.Truncate(time.Millisecond)) {
		t.Errorf("<time datetime=%q>, want the instant %s", attr, updated.UTC().Format(time.RFC3339Nano))
	}
}
