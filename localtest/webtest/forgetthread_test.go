package webtest_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestForgetConversation: the page lists the conversations the facts were
// learned in, each with a button "Forget what I learned in “<title>”";
// behind a question (cancelled first, then confirmed), it forgets exactly
// what that conversation taught: not the fact set by hand, not another
// conversation's. Each view is audited with axe-core.
func TestForgetConversation(t *testing.T) {
	user := "page-forget-thread"
	tok := tokenFor(t, user, false)
	putFact(t, tok, "name", "Ana", "")
	learn(t, tok, user, "th-move", "Moving house", "I moved to Porto last week.", "home_city",
		op{Op: "SET", Key: "home_city", Value: "Porto", Evidence: "I moved to Porto"})
	learn(t, tok, user, "th-pets", "Pets", "I have a cat called Mia.", "pet",
		op{Op: "SET", Key: "pet", Value: "cat", Evidence: "I have a cat"})
	ctx, dialogs := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "3 of 30 facts")
	move := `#threads li[data-thread="th-move"]`
	waitText(t, ctx, move+" .thread-name", "“Moving house”")
	waitText(t, ctx, move+" .thread-keys", "Taught me home_city")
	waitText(t, ctx, `#threads li[data-thread="th-pets"] .thread-keys`, "Taught me pet")
	if got := evaluate[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).textContent`, move+" .thread-forget")); got != "Forget what I learned in “Moving house”" {
		t.Errorf("button = %q, want Forget what I learned in “Moving house”", got)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll("#threads li").length`); n != 2 {
		t.Errorf("%d conversations listed, want 2 (a fact set by hand is no conversation's)", n)
	}
	audit(t, ctx, "user, conversations")

	run1(t, ctx, "cancel the forget",
		chromedp.Click(chromedp.CSS(move+" .thread-forget")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-ok")))
	waitText(t, ctx, "#confirm-title", "Forget what I learned in “Moving house”?")
	audit(t, ctx, "confirm forget a conversation")
	run1(t, ctx, "cancel", chromedp.Click(chromedp.CSS("#confirm-cancel")), chromedp.WaitNotVisible(chromedp.CSS("#confirm")))
	if n := len(factValues(t, tok, "/v1/me/facts")); n != 3 {
		t.Fatalf("after cancel: %d facts, want 3", n)
	}
	run1(t, ctx, "confirm the forget",
		chromedp.Click(chromedp.CSS(move+" .thread-forget")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-ok")),
		chromedp.Click(chromedp.CSS("#confirm-ok")))
	waitText(t, ctx, "#status", "Forgot what I learned in “Moving house”: home_city = Porto.")
	waitText(t, ctx, "#caps", "2 of 30 facts")
	got := factValues(t, tok, "/v1/me/facts")
	if len(got) != 2 || got["name"] != "Ana" || got["pet"] != "cat" {
		t.Errorf("after forgetting “Moving house” the API has %v, want name and pet", got)
	}
	if evaluate[bool](t, ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, move)) {
		t.Error("the forgotten conversation is still listed")
	}
	audit(t, ctx, "user, a conversation forgotten")
	if dialogs.Load() != 0 {
		t.Errorf("the page opened %d JavaScript dialogs", dialogs.Load())
	}
}
