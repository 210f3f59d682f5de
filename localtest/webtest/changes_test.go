package webtest_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestRecentChangesUndo: the page shows at the top what a conversation
// changed, "home_city: Lisbon → Porto" and a new "pet = cat", with the
// conversation's title and an Undo each; Undo sets Lisbon back, and
// removes the new pet, in the API too. Each view is audited with
// axe-core.
func TestRecentChangesUndo(t *testing.T) {
	user := "page-changes-undo"
	tok := tokenFor(t, user, false)
	putFact(t, tok, "name", "Ana", "")
	putFact(t, tok, "home_city", "Lisbon", "")
	learn(t, tok, user, "th-move", "Moving house", "I moved to Porto and I have a cat called Mia.", "pet",
		op{Op: "SET", Key: "home_city", Value: "Porto", Evidence: "I moved to Porto"},
		op{Op: "SET", Key: "pet", Value: "cat", Evidence: "I have a cat"})
	ctx, dialogs := browser(t)
	run1(t, ctx, "open the page", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	city, pet := `#changes li[data-key="home_city"]`, `#changes li[data-key="pet"]`
	waitText(t, ctx, city+" .change-text", "home_city: Lisbon → Porto")
	waitText(t, ctx, city+" .change-meta", "Learned in “Moving house”")
	waitText(t, ctx, pet+" .change-text", "pet = cat")
	audit(t, ctx, "user, recent changes")

	run1(t, ctx, "undo the city", chromedp.Click(chromedp.CSS(city+" .change-undo")))
	waitText(t, ctx, "#status", "Undone: home_city is Lisbon again.")
	if got := factValues(t, tok, "/v1/me/facts"); got["home_city"] != "Lisbon" || got["pet"] != "cat" {
		t.Errorf("after undoing the city the API has %v, want home_city Lisbon and pet cat", got)
	}
	if evaluate[bool](t, ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, city)) {
		t.Error("the undone change is still listed")
	}
	waitText(t, ctx, pet+" .change-text", "pet = cat")

	run1(t, ctx, "undo the pet", chromedp.Click(chromedp.CSS(pet+" .change-undo")))
	waitText(t, ctx, "#status", "Undone: I forgot pet = cat.")
	if got := factValues(t, tok, "/v1/me/facts"); len(got) != 2 || got["home_city"] != "Lisbon" || got["name"] != "Ana" {
		t.Errorf("after undoing the pet the API has %v, want name and home_city only", got)
	}
	if evaluate[bool](t, ctx, `!document.getElementById("changes-card").hidden`) {
		t.Error("the recent changes still show with nothing left to undo")
	}
	audit(t, ctx, "user, changes undone")
	if dialogs.Load() != 0 {
		t.Errorf("the page opened %d JavaScript dialogs", dialogs.Load())
	}
}
