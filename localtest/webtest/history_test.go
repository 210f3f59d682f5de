package webtest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestFactHistory: a fact a later conversation changed shows its previous
// value with the change ("Was Lisbon until you said “I moved to Porto” in
// “Moving house” on …") and a Restore button, which sets the old value
// back by hand: the fact is Lisbon again, set by hand, with no history
// left. Each view is audited with axe-core.
func TestFactHistory(t *testing.T) {
	user := "page-history"
	tok := tokenFor(t, user, false)
	learn(t, tok, user, "th-home", "Home", "I live in Lisbon.", "home_city",
		op{Op: "SET", Key: "home_city", Value: "Lisbon", Evidence: "I live in Lisbon"})
	learn(t, tok, user, "th-move", "Moving house", "I moved to Porto last week.", "home_city",
		op{Op: "SET", Key: "home_city", Value: "Porto", Evidence: "I moved to Porto"})
	for deadline := time.Now().Add(30 * time.Second); factField(t, tok, "home_city", "value") != "Porto"; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the extraction did not change home_city to Porto within 30 s")
		}
	}
	ctx, dialogs := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, factSel("home_city", ".fact-value"), "Porto")
	waitText(t, ctx, factSel("home_city", ".fact-history"), "Was Lisbon until you said “I moved to Porto” in “Moving house” on ")
	if got := evaluate[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-label")`, factSel("home_city", ".fact-restore"))); got != "Restore home_city = Lisbon" {
		t.Errorf("Restore button's label = %q, want Restore home_city = Lisbon", got)
	}
	audit(t, ctx, "user, a fact with its history")

	run1(t, ctx, "restore Lisbon", chromedp.Click(chromedp.CSS(factSel("home_city", ".fact-restore"))))
	waitText(t, ctx, "#status", "Restored home_city = Lisbon (it was Porto).")
	waitText(t, ctx, factSel("home_city", ".fact-value"), "Lisbon")
	if v, o := factField(t, tok, "home_city", "value"), factField(t, tok, "home_city", "origin"); v != "Lisbon" || o != "manual" {
		t.Errorf("after Restore the API has home_city = %q (origin %q), want Lisbon set by hand", v, o)
	}
	if evaluate[bool](t, ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, factSel("home_city", ".fact-history"))) {
		t.Error("a fact set by hand still shows a history")
	}
	audit(t, ctx, "user, a previous value restored")
	if dialogs.Load() != 0 {
		t.Errorf("the page opened %d JavaScript dialogs", dialogs.Load())
	}
}
