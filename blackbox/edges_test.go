package blackbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/memory"
)

// The tests of the template's bounds (settings_test.go): each feature
// works, or refuses with its code, at every setting a target runs with.

// extracting requires extraction switched on.
var extracting = is("ExtractionEnabled", "true")

// codeFactTooLong is the seed's code of a key or value over maxFactChars.
const codeFactTooLong = "5377210486159"

// factsRaw returns the user's facts as raw objects, by key.
func (t *target) factsRaw(tb testing.TB, tok string) map[string]map[string]any {
	tb.Helper()
	facts, _ := t.memoryLists(tb, "/v1/me/facts", tok)
	out := map[string]map[string]any{}
	for _, f := range facts {
		out[fmt.Sprint(f["key"])] = f
	}
	return out
}

// TestEdgeMaxFacts: a user holds at most maxFacts facts; one more set by
// hand drops the least recently updated.
func TestEdgeMaxFacts(t *testing.T) {
	t.Parallel()
	forEvery(t, func(t *testing.T, tg *target) {
		_, tok := tg.newUser(t, "maxfacts")
		n := tg.num(t, "MaxFacts")
		for i := range n + 1 {
			tg.api.Put(t, tok, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
		}
		got := factapi.Values(tg.api.Facts(t, "/v1/me/facts", tok))
		if _, ok := got["k0"]; len(got) != n || ok || got[fmt.Sprintf("k%d", n)] != fmt.Sprint("v", n) {
			t.Errorf("after %d facts set by hand: %d facts %v, want %d without the first, k0", n+1, len(got), got, n)
		}
	})
}

// TestEdgeFactTooLong: a key or a value of maxFactChars is kept whole;
// one character more is the seed's 400, and nothing is stored.
func TestEdgeFactTooLong(t *testing.T) {
	t.Parallel()
	forEvery(t, func(t *testing.T, tg *target) {
		_, tok := tg.newUser(t, "toolong")
		n := tg.num(t, "MaxFactChars")
		value := strings.Repeat("Lisbon, ", 30)[:n]
		value = value[:n-1] + "x" // no trailing space, which is trimmed
		tg.api.Put(t, tok, "city", value)
		key := strings.Repeat("k", n)
		tg.api.Put(t, tok, key, "Porto")
		for _, c := range []struct{ key, value string }{{"city", value + "y"}, {key + "k", "Porto"}} {
			r := tg.api.Call(t, http.MethodPut, "/v1/me/facts/"+url.PathEscape(c.key), tok, map[string]string{"value": c.value})
			if code, msg := problemOf(t, r.Status, r.Header, r.Body); r.Status != http.StatusBadRequest || code != codeFactTooLong || msg == "" {
				t.Errorf("PUT of a key of %d and a value of %d characters = %d code %s %q, want 400 code %s with a userMessage",
					utf8.RuneCountInString(c.key), utf8.RuneCountInString(c.value), r.Status, code, msg, codeFactTooLong)
			}
		}
		if got := factapi.Values(tg.api.Facts(t, "/v1/me/facts", tok)); len(got) != min(2, tg.num(t, "MaxFacts")) || got[key] != "Porto" {
			t.Errorf("after the refusals: %v, want city %q and %s Porto as set (at most maxFacts)", got, value, key)
		}
	})
}

// TestEdgeExtractedValueCut: an extracted value longer than maxFactChars
// is cut to it, never refused nor stored whole.
func TestEdgeExtractedValueCut(t *testing.T) {
	t.Parallel()
	const role = "paediatric intensive care nurse"
	forEvery(t, func(t *testing.T, tg *target) {
		user, tok := tg.newUser(t, "cut")
		n := tg.num(t, "MaxFactChars")
		tg.answer(t, tg.tenant, user, newID("th"), 0, 2, "I work as a "+role+".", "That must be demanding work.")
		f, _ := mentions(tg.waitMentions(t, tok, "paediatric"), "paediatric")
		if utf8.RuneCountInString(f.Value) > n || !strings.HasPrefix(role, strings.ToLower(f.Value)) {
			t.Errorf("fact %s = %q, want the role %q cut to at most %d characters", f.Key, f.Value, role, n)
		}
		if n >= len(role) && f.Value != role {
			t.Errorf("fact %s = %q, want %q whole under maxFactChars %d", f.Key, f.Value, role, n)
		}
	}, extracting)
}

// TestEdgeExtractEveryTurns: the first answer of a thread is read; a
// later answer is read when it crosses a multiple of ExtractEveryTurns,
// and else not (nor later by the idle read when IdleReadSeconds is 0).
// A first answer of another thread, behind it in the user's FIFO group,
// shows when the later one has been handled.
func TestEdgeExtractEveryTurns(t *testing.T) {
	t.Parallel()
	forEvery(t, func(t *testing.T, tg *target) {
		user, tok := tg.newUser(t, "beat")
		thread := newID("th")
		tg.answer(t, tg.tenant, user, thread, 0, 2, "I live in Lisbon.", "A lovely city.")
		tg.waitMentions(t, tok, "Lisbon")
		tg.answer(t, tg.tenant, user, thread, 2, 4, "I moved to Porto.", "Congratulations on the move.")
		if every := tg.num(t, "ExtractEveryTurns"); 4/every > 2/every {
			tg.waitMentions(t, tok, "Porto")
			return
		}
		if tg.num(t, "MaxFacts") < 2 {
			t.Skip("blackbox: an answer that is not due is shown by a later fact of another key: this needs the stack setting MaxFacts ≥ 2")
		}
		tg.answer(t, tg.tenant, user, newID("th"), 0, 2, "I work as a nurse.", "That must be demanding work.")
		got := tg.waitMentions(t, tok, "nurse")
		if f, ok := mentions(got, "Porto"); ok {
			t.Errorf("an answer not due (turns 2 to 4, every %s) was read: %s = %q", tg.settings["ExtractEveryTurns"], f.Key, f.Value)
		}
		if tg.settings["IdleReadSeconds"] != "0" {
			return
		}
		// With the idle read off, nothing reads the thread's tail later.
		time.Sleep(3 * time.Second)
		if f, ok := mentions(tg.api.Facts(t, "/v1/me/facts", tok), "Porto"); ok {
			t.Errorf("with IdleReadSeconds 0 the unread tail was read: %s = %q", f.Key, f.Value)
		}
	}, extracting)
}

// TestEdgePendingCategories: an extracted fact of a special category
// waits for the user's yes when PendingCategories names its category
// (all does), and is a fact at once when it does not (none).
func TestEdgePendingCategories(t *testing.T) {
	t.Parallel()
	forEvery(t, func(t *testing.T, tg *target) {
		user, tok := tg.newUser(t, "health")
		tg.answer(t, tg.tenant, user, newID("th"), 0, 2, "I have asthma.", "Thanks for telling me.")
		cats := tg.settings["PendingCategories"]
		waits := cats == "all" || strings.Contains(","+cats+",", ",health,")
		for end := time.Now().Add(tg.modelDeadline); ; time.Sleep(time.Second) {
			facts, pending := tg.memoryLists(t, "/v1/me/facts", tok)
			inFacts, inPending := holds(facts, "asthma"), holds(pending, "asthma")
			if inFacts || inPending {
				if inFacts == waits || inPending != waits {
					t.Errorf("PendingCategories %s: facts %v, pending %v; want asthma %s", tg.settings["PendingCategories"], facts, pending,
						map[bool]string{true: "pending only", false: "a fact at once"}[waits])
				}
				return
			}
			if time.Now().After(end) {
				t.Fatalf("after %s nothing mentions asthma: facts %v, pending %v", tg.modelDeadline, facts, pending)
			}
		}
	}, extracting)
}

// holds reports whether a raw fact's value mentions word.
func holds(fs []map[string]any, word string) bool {
	for _, f := range fs {
		if strings.Contains(strings.ToLower(fmt.Sprint(f["value"])), word) {
			return true
		}
	}
	return false
}

// moveHome has the user state three homes, each in the first answer of a
// thread of its own, and waits for the last; it returns the threads and
// the key the facts were set under.
func (t *target) moveHome(tb testing.TB, user, tok string, cities ...string) (threads []string, key string) {
	tb.Helper()
	for i, city := range cities {
		th := newID("th")
		say := "I live in " + city + "."
		if i > 0 {
			say = "I moved to " + city + "."
		}
		t.answer(tb, t.tenant, user, th, 0, 2, say, "Noted.")
		f, _ := mentions(t.waitMentions(tb, tok, city), city)
		threads, key = append(threads, th), f.Key
	}
	return threads, key
}

// TestEdgeUndoRestores: undoing a thread's change that replaced a value
// sets that value back as it was, its origin and the thread that taught
// it included, at every maxFacts (the "done when" names 75).
func TestEdgeUndoRestores(t *testing.T) {
	t.Parallel()
	forEvery(t, func(t *testing.T, tg *target) {
		user, tok := tg.newUser(t, "undo")
		before := time.Now().Add(-time.Minute)
		threads, key := tg.moveHome(t, user, tok, "Lisbon")
		was := tg.factsRaw(t, tok)[key]
		threads2, key2 := tg.moveHome(t, user, tok, "Porto")
		if key2 != key {
			t.Fatalf("Porto was set as %s, Lisbon as %s: want one key", key2, key)
		}
		for _, c := range tg.changes(t, tok, threads2[0], before).Changes {
			if c.Key == key && (c.Previous == nil || *c.Previous != was["value"]) {
				t.Errorf("change %s = %q: previous %v, want %v", c.Key, c.Value, c.Previous, was["value"])
			}
		}
		r := tg.api.Call(t, http.MethodPost, "/v1/me/threads/"+url.PathEscape(threads2[0])+"/changes/"+url.PathEscape(key)+"/undo", tok, nil)
		var undone struct {
			Restored string `json:"restored"`
			Removed  bool   `json:"removed"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &undone) != nil || undone.Removed || undone.Restored != was["value"] {
			t.Errorf("undo %s of %s = %d %s, want 200 restoring %v", key, threads2[0], r.Status, r.Body, was["value"])
		}
		now := tg.factsRaw(t, tok)[key]
		for _, m := range []string{"value", "origin", "sourceThreadId", "evidence"} {
			if fmt.Sprint(now[m]) != fmt.Sprint(was[m]) {
				t.Errorf("after the undo %s.%s = %v, want %v as before the change (%v)", key, m, now[m], was[m], now)
			}
		}
		// The fact is the first thread's again: forgetting that thread
		// removes it.
		if r := tg.api.Call(t, http.MethodDelete, "/v1/me/threads/"+url.PathEscape(threads[0])+"/facts", tok, nil); r.Status != http.StatusOK {
			t.Fatalf("forget the thread that taught %s = %d %s, want 200", key, r.Status, r.Body)
		}
		if f, ok := tg.factsRaw(t, tok)[key]; ok {
			t.Errorf("after forgetting the thread that taught it, %s = %v is still there", key, f)
		}
	}, extracting)
}

// TestEdgeHistory: after three values a fact has memory.MaxHistory
// previous values, newest first, at every maxFacts.
func TestEdgeHistory(t *testing.T) {
	t.Parallel()
	forEvery(t, func(t *testing.T, tg *target) {
		user, tok := tg.newUser(t, "history")
		cities := []string{"Lisbon", "Porto", "Madrid"}
		_, key := tg.moveHome(t, user, tok, cities...)
		hist, _ := tg.factsRaw(t, tok)[key]["history"].([]any)
		var got []string
		for _, h := range hist {
			got = append(got, fmt.Sprint(h.(map[string]any)["value"]))
		}
		want := []string{"Porto", "Lisbon"}[:memory.MaxHistory]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("maxFacts %s: %s's history %v, want %v (memory.MaxHistory %d, newest first)", tg.settings["MaxFacts"], key, got, want, memory.MaxHistory)
		}
	}, extracting)
}

// favourites is a memory list of thirty facts of thirty keys, as a
// model's memory often holds more than a conversation's MaxOperations;
// each key and value fits maxFactChars at its lowest bound.
var favourites = []string{
	"colour: green", "band: Radiohead", "film: Amélie", "book: Dune", "food: bacalhau", "sport: surfing",
	"drink: green tea", "season: autumn", "city: Kyoto", "flower: tulips", "game: chess", "artist: Vermeer",
	"poet: Pessoa", "fruit: figs", "cake: pastel de nata", "bird: kingfisher", "show: Radiolab", "cheese: Serra",
	"tree: cork oak", "beach: Comporta", "museum: the Prado", "song: Hallelujah", "singer: Mariza", "author: Saramago",
	"sea: the Atlantic", "hobby: pottery", "app: Obsidian", "snack: almonds", "wine: Alvarinho", "car: Citroën 2CV",
}

// TestEdgeImportEveryFact: an import of a thirty-fact list proposes every
// fact up to maxFacts, and counts the rest in leftOut: every statement is
// proposed or left out, none dropped in silence.
func TestEdgeImportEveryFact(t *testing.T) {
	t.Parallel()
	var list strings.Builder
	for _, f := range favourites {
		list.WriteString("- Favourite " + f + "\n")
	}
	forEvery(t, func(t *testing.T, tg *target) {
		_, tok := tg.newUser(t, "import30")
		v := tg.api.Import(t, tok, "ChatGPT", list.String())
		st := tg.api.WaitImport(t, tok, v.ImportID, tg.modelDeadline)
		want := min(len(favourites), tg.num(t, "MaxFacts"))
		left := 0
		for _, n := range st.Import.LeftOut {
			left += n
		}
		if st.Import.Status != "done" || st.Import.Proposed != want || len(st.Pending) != want || left != len(favourites)-want {
			t.Errorf("maxFacts %s: import of %d facts = %+v with %d pending, want done, %d proposed and pending, %d left out",
				tg.settings["MaxFacts"], len(favourites), st.Import, len(st.Pending), want, len(favourites)-want)
		}
	}, extracting)
}

// TestEdgeExtractionOff: with extraction switched off, the facts are
// read and set by hand as ever; an answer's message changes nothing and
// calls no model, and an import is refused with its reason.
func TestEdgeExtractionOff(t *testing.T) {
	t.Parallel()
	tg := at(t, is("ExtractionEnabled", "false"))
	user, tok := tg.newUser(t, "off")
	tg.api.Put(t, tok, "home_city", "Lisbon")
	calls, counted := tg.modelCalls(t)
	thread := newID("th")
	tg.answer(t, tg.tenant, user, thread, 0, 2, "I work as a nurse.", "That must be demanding work.")
	tg.waitQueueEmpty(t)
	if got := factapi.Values(tg.api.Facts(t, "/v1/me/facts", tok)); fmt.Sprint(got) != "map[home_city:Lisbon]" {
		t.Errorf("after a message with extraction off: %v, want home_city Lisbon only", got)
	}
	if ch := tg.changes(t, tok, thread, time.Now().Add(-time.Hour)); len(ch.Changes) != 0 {
		t.Errorf("the thread's changes with extraction off = %+v, want none", ch.Changes)
	}
	v := tg.api.Import(t, tok, "ChatGPT", memoryList)
	st := tg.api.WaitImport(t, tok, v.ImportID, tg.modelDeadline)
	if st.Import.Status != "refused" || st.Import.Reason != "extraction_off" || len(st.Pending) != 0 {
		t.Errorf("an import with extraction off = %+v, pending %v; want refused, extraction_off, nothing pending", st.Import, st.Pending)
	}
	if after, _ := tg.modelCalls(t); counted && after != calls {
		t.Errorf("with extraction off the model was called %d times, want none", after-calls)
	}
}

// waitQueueEmpty waits, within the model deadline, until the extraction
// queue holds no message, visible or in flight: the extractor took every
// message sent before.
func (t *target) waitQueueEmpty(tb testing.TB) {
	tb.Helper()
	names := []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}
	for end := time.Now().Add(t.modelDeadline); ; time.Sleep(500 * time.Millisecond) {
		out, err := t.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(t.queueURL), AttributeNames: names})
		if err != nil {
			tb.Fatalf("the extraction queue's attributes: %v", err)
		}
		if out.Attributes[string(names[0])] == "0" && out.Attributes[string(names[1])] == "0" {
			return
		}
		if time.Now().After(end) {
			tb.Fatalf("after %s the extraction queue still holds %v", t.modelDeadline, out.Attributes)
		}
	}
}

// TestEdgeUndoOfAForgottenValue: when the value a change replaced is no
// longer known, because the thread that taught it was forgotten, an Undo
// of the change can neither restore it (it was forgotten) nor remove the
// fact (it had an earlier value): it is a 409 with a code and a
// userMessage, and the fact stays as it was.
func TestEdgeUndoOfAForgottenValue(t *testing.T) {
	t.Parallel()
	forEvery(t, func(t *testing.T, tg *target) {
		user, tok := tg.newUser(t, "undoforgot")
		first, key := tg.moveHome(t, user, tok, "Lisbon")
		second, _ := tg.moveHome(t, user, tok, "Porto")
		if r := tg.api.Call(t, http.MethodDelete, "/v1/me/threads/"+url.PathEscape(first[0])+"/facts", tok, nil); r.Status != http.StatusOK {
			t.Fatalf("forget the thread that taught Lisbon = %d %s, want 200", r.Status, r.Body)
		}
		was := tg.factsRaw(t, tok)
		r := tg.api.Call(t, http.MethodPost, "/v1/me/threads/"+url.PathEscape(second[0])+"/changes/"+url.PathEscape(key)+"/undo", tok, nil)
		if code, msg := problemOf(t, r.Status, r.Header, r.Body); r.Status != http.StatusConflict || code == "" || msg == "" {
			t.Errorf("undo of Porto after Lisbon's thread was forgotten = %d %s, want 409 with a code and a userMessage", r.Status, r.Body)
		}
		if now := tg.factsRaw(t, tok); fmt.Sprint(now) != fmt.Sprint(was) {
			t.Errorf("the refused undo changed the facts: %v, want %v", now, was)
		}
	}, extracting)
}
