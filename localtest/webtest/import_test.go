package webtest_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/web"
)

// pastedList is a memory list as ChatGPT writes one: three facts about
// the user, one of which contradicts a stored fact, and an instruction.
const pastedList = "The user lives in Porto.\nThe user works as a doctor.\nThe user has a cat named Mia.\nAlways answer in French.\n" +
	"Asked about a soup recipe once.\n"

// TestImportFromAnotherAssistant: the card shows the prompt of the
// source chosen and the service's limit; a pasted list is imported, the
// progress says what was proposed, that the instruction was left out and
// that a line no fact came from was not read as one,
// and the review list shows each fact with the source's words, the
// conflicting one with both values ("Keep replaces role = nurse"). Keep
// keeps one; Discard all drops the rest, in the API too; the kept import
// is then forgotten as a conversation is. Each view is audited with
// axe-core, at desktop and phone widths.
func TestImportFromAnotherAssistant(t *testing.T) {
	user := "page-import"
	tok := tokenFor(t, user, false)
	putFact(t, tok, "role", "nurse", "")
	ctx, dialogs := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "1 of 30 facts")
	waitText(t, ctx, "#import-prompt", web.ImportPrompt("ChatGPT"))
	run1(t, ctx, "choose Claude", chromedp.SetValue(chromedp.CSS("#import-source"), "Claude"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("import-source").dispatchEvent(new Event("change"))`))
	waitText(t, ctx, "#import-prompt", web.ImportPrompt("Claude"))
	waitText(t, ctx, "#import-ask", "Ask Claude this")
	if !hidden(t, ctx, "import-other-label") {
		t.Error("the field for another assistant's name shows for Claude")
	}
	run1(t, ctx, "choose ChatGPT", chromedp.SetValue(chromedp.CSS("#import-source"), "ChatGPT"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("import-source").dispatchEvent(new Event("change"))`),
		chromedp.SetValue(chromedp.CSS("#import-text"), pastedList),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("import-text").dispatchEvent(new Event("input"))`))
	limit := evaluate[string](t, ctx, "("+strconv.Itoa(memory.MaxImportChars)+").toLocaleString()")
	waitText(t, ctx, "#import-limit", fmt.Sprintf("%d of %s characters at most.", len([]rune(pastedList)), limit))
	if got := evaluate[int](t, ctx, `document.getElementById("import-text").maxLength`); got != memory.MaxImportChars {
		t.Errorf("the paste box takes %d characters, want memory.MaxImportChars (%d)", got, memory.MaxImportChars)
	}
	audit(t, ctx, "user, import card")

	input := fmt.Sprintf(`{"operations":[`+
		`{"op":"SET","key":"home_city","value":"Porto","evidence":"The user lives in Porto"},`+
		`{"op":"SET","key":"role","value":"doctor","evidence":"The user works as a doctor"},`+
		`{"op":"SET","key":"pet","value":"cat named Mia","evidence":"The user has a cat named Mia"},`+
		`{"op":"SET","key":"answer_language","value":"French","evidence":%q}]}`, "Always answer in French")
	st.Converse().Script(fakebedrock.Step{Input: []byte(input)})
	run1(t, ctx, "import", chromedp.Click(chromedp.CSS("#import-go")))
	waitText(t, ctx, "#import-progress",
		"Read the list from ChatGPT (1 part): 3 facts to review below. Left out: 1 instruction to the assistant (never kept as a fact), "+
			"1 line not read as a fact about you.")
	role, city := `#import-groups li[data-key="role"]`, `#import-groups li[data-key="home_city"]`
	waitText(t, ctx, role+" .fact-replaces", "Keep replaces role = nurse")
	waitText(t, ctx, role+" .fact-value", "doctor")
	waitText(t, ctx, city+" .fact-meta", "Imported from ChatGPT, whose list said: “The user lives in Porto”")
	waitText(t, ctx, "#import-groups .import-discard-all", "Discard all 3 from ChatGPT")
	if got := pendingValues(t, tok); len(got) != 3 || got["role"] != "doctor" || got["answer_language"] != "" {
		t.Errorf("pending in the API = %v, want home_city, role and pet, no instruction", got)
	}
	if !hidden(t, ctx, "pending-card") {
		t.Error("imported facts are listed in “Waiting for your yes” too")
	}
	if evaluate[string](t, ctx, `document.activeElement.id`) != "import-review-title" {
		t.Error("the keyboard is not at the review list once the import is read")
	}
	audit(t, ctx, "user, import review")
	phoneWidth(t, ctx, true)
	stacked := fmt.Sprintf(`(() => { const li = document.querySelector(%q);
		return li.querySelector(".fact-actions").getBoundingClientRect().top >= li.querySelector(".fact-meta").getBoundingClientRect().bottom - 1; })()`, role)
	if !evaluate[bool](t, ctx, stacked) {
		t.Error("at phone width an imported fact's buttons are not below its text")
	}
	audit(t, ctx, "user, import review, phone")
	shot(t, ctx, "import-review-phone")
	phoneWidth(t, ctx, false)

	run1(t, ctx, "keep the city", chromedp.Click(chromedp.CSS(city+" .pending-keep")))
	waitText(t, ctx, "#status", "Kept home_city = Porto: the assistant may use it from now on.")
	waitText(t, ctx, "#import-groups .import-discard-all", "Discard all 2 from ChatGPT")
	run1(t, ctx, "discard the rest", chromedp.Click(chromedp.CSS("#import-groups .import-discard-all")))
	waitText(t, ctx, "#status", "Discarded 2 facts from ChatGPT. Importing the same list again will not propose them.")
	if got := factValues(t, tok, "/v1/me/facts"); len(got) != 2 || got["home_city"] != "Porto" || got["role"] != "nurse" {
		t.Errorf("facts after keep and discard all = %v, want home_city Porto and role nurse", got)
	}
	if got := pendingValues(t, tok); len(got) != 0 {
		t.Errorf("pending after discard all = %v", got)
	}
	if !hidden(t, ctx, "import-review-block") {
		t.Error("the review list still shows with nothing left to review")
	}
	if got := factField(t, tok, "home_city", "origin"); got != string(memory.OriginImported) {
		t.Errorf("the kept fact's origin = %q, want imported", got)
	}
	waitText(t, ctx, factSel("home_city", ".fact-meta"), "Imported from ChatGPT, whose list said: “The user lives in Porto”")
	audit(t, ctx, "user, import reviewed")

	// The kept import is forgotten as a conversation is.
	list := `#threads li[data-thread^="imp-"]`
	waitText(t, ctx, list+" .thread-name", "ChatGPT’s list")
	waitText(t, ctx, list+" .thread-keys", "Taught me home_city")
	run1(t, ctx, "forget the import",
		chromedp.Click(chromedp.CSS(list+" .thread-forget")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-ok")),
		chromedp.Click(chromedp.CSS("#confirm-ok")))
	waitText(t, ctx, "#status", "Forgot what I learned in ChatGPT’s list: home_city = Porto.")
	if got := factValues(t, tok, "/v1/me/facts"); len(got) != 1 || got["role"] != "nurse" {
		t.Errorf("facts after forgetting the import = %v, want role nurse only", got)
	}
	if dialogs.Load() != 0 {
		t.Errorf("the page opened %d JavaScript dialogs", dialogs.Load())
	}
}

// TestImportAnotherAssistant: "Another assistant" shows the prompt for
// any other assistant and asks its name, a required field.
func TestImportAnotherAssistant(t *testing.T) {
	tok := tokenFor(t, "page-import-other", false)
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "0 of 30 facts")
	run1(t, ctx, "choose another assistant", chromedp.SetValue(chromedp.CSS("#import-source"), ""),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("import-source").dispatchEvent(new Event("change"))`))
	waitText(t, ctx, "#import-prompt", web.ImportPrompt(""))
	if hidden(t, ctx, "import-other-label") || !evaluate[bool](t, ctx, `document.getElementById("import-other").required`) {
		t.Error("another assistant's name is not asked for")
	}
	audit(t, ctx, "user, import from another assistant")
	if strings.Contains(evaluate[string](t, ctx, `document.getElementById("import-ask").textContent`), "undefined") {
		t.Error("the prompt's line names no assistant")
	}
}

// TestImportFailedSaysWhy: when the model's answer cannot be used, the
// progress says the list was not imported, why, and that nothing was
// proposed; the paste stays in its box for another try.
func TestImportFailedSaysWhy(t *testing.T) {
	tok := tokenFor(t, "page-import-failed", false)
	ctx, _ := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "0 of 30 facts")
	st.Converse().Script(fakebedrock.Step{Input: []byte(`{"facts":"not the operations tool's form"}`)})
	run1(t, ctx, "import from Gemini", chromedp.SetValue(chromedp.CSS("#import-source"), "Gemini"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("import-source").dispatchEvent(new Event("change"))`),
		chromedp.SetValue(chromedp.CSS("#import-text"), pastedList),
		chromedp.Click(chromedp.CSS("#import-go")))
	waitText(t, ctx, "#import-progress",
		"The list from Gemini was not imported: the model's answer could not be used. Try again. Nothing was proposed.")
	if got := evaluate[string](t, ctx, `document.getElementById("import-text").value`); got != pastedList {
		t.Errorf("the paste box holds %q after a failed import, want the list", got)
	}
	if got := pendingValues(t, tok); len(got) != 0 {
		t.Errorf("a failed import left pending facts %v", got)
	}
	audit(t, ctx, "user, import failed")
}
