package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
)

// envIdleRead is the extractor's setting of the idle read: the seconds a
// thread stays idle before its unread turns are read, 0 for off.
const envIdleRead = "IDLE_READ_SECONDS"

// idleReadOf returns the idle read of the extractor's environment env: its
// IDLE_READ_SECONDS as a duration (0: off), or -1 when env does not hold
// a number of seconds.
func idleReadOf(env map[string]string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(env[envIdleRead]))
	if err != nil || n < 0 {
		return -1
	}
	return time.Duration(n) * time.Second
}

// notDue says what happens to the turns of an answer that is not due for
// an extraction at turn n: they are read at the next due turn, or by the
// idle read once the thread has been idle for d (0: off; -1: unknown).
func notDue(n int, d time.Duration) string {
	head := fmt.Sprintf("extraction message sent; not due at turn %d: read at the next due turn", n)
	switch {
	case d == 0:
		return head + " (the idle read is off)"
	case d < 0:
		return head + ", or after the thread is idle for the idle-read time"
	case d%time.Minute == 0:
		return head + fmt.Sprintf(", or after the thread is idle for %d min", d/time.Minute)
	default:
		return head + ", or after the thread is idle for " + d.String()
	}
}

func (c *chatSession) ask(ctx context.Context, text string) error {
	before, err := c.store.GetFactsAndPending(ctx, c.sc)
	if err != nil {
		return err
	}
	since := time.Now().Add(-time.Second) // the extractor's clock is this machine's
	reply, err := c.gw.Ask(ctx, c.thread, text, c.approve)
	for _, t := range reply.Tools {
		switch {
		case t.Err != nil:
			fmt.Fprintf(c.out, "  [tool %s refused: %v]\n", t.Call.Name, t.Err)
		default:
			fmt.Fprintf(c.out, "  [tool %s: %s]\n", t.Call.Name, t.Result)
		}
	}
	if reply.Text != "" {
		fmt.Fprintf(c.out, "assistant> %s\n", reply.Text)
	}
	if err != nil {
		return err
	}
	if !reply.ExtractDue {
		fmt.Fprintf(c.out, "  (%s)\n", notDue(c.thread.TurnCount(), c.idleRead))
		return nil
	}
	done, err := c.extracted(ctx)
	if err != nil || !done {
		return err
	}
	after, err := c.store.GetFactsAndPending(ctx, c.sc)
	if err != nil {
		return err
	}
	changes := diff(before.Facts, after.Facts)
	waiting := newPending(before.Pending, after.Pending)
	if len(changes) > 0 {
		fmt.Fprintf(c.out, "  memory: %s\n", strings.Join(changes, ", "))
	}
	if err := c.memoryUpdated(ctx, since); err != nil {
		return err
	}
	if len(waiting) > 0 {
		fmt.Fprintf(c.out, "  learned %s: %s\n", waitCount(len(waiting)), strings.Join(waiting, ", "))
	}
	if len(changes) == 0 && len(waiting) == 0 {
		fmt.Fprintln(c.out, "  (the extractor learned nothing new)")
	}
	return c.printPending(ctx, false)
}

// waitCount says how many facts wait for the user's yes: "1 fact that
// waits for your yes", "2 facts that wait for your yes".
func waitCount(n int) string {
	if n == 1 {
		return "1 fact that waits for your yes"
	}
	return fmt.Sprintf("%d facts that wait for your yes", n)
}

// newPending returns the keys of the pending facts of after that are not
// in before with the same value, in key order.
func newPending(before, after []memory.Fact) []string {
	old := map[string]string{}
	for _, f := range before {
		old[f.Key] = f.Value
	}
	var out []string
	for _, f := range after {
		if v, ok := old[f.Key]; !ok || v != f.Value {
			out = append(out, f.Key)
		}
	}
	return out
}

// keyCommand runs /forget, /keep or /discard on arg: a key, or for /keep
// and /discard the category of exactly one pending fact. What it says is
// what happened: nothing changes, and it says so, when there is nothing
// under the key.
func (c *chatSession) keyCommand(ctx context.Context, cmd, arg string) error {
	if arg == "" {
		fmt.Fprintf(c.out, "usage: %s KEY (see /facts and /pending)\n", cmd)
		return nil
	}
	if arg == "all" && cmd != "/forget" {
		return c.importAll(ctx, cmd)
	}
	if err := memory.CheckKey(arg); err != nil {
		return err
	}
	m, err := c.store.GetFactsAndPending(ctx, c.sc)
	if err != nil {
		return err
	}
	k := memory.CanonicalKey(arg)
	if cmd == "/forget" {
		return c.forget(ctx, m, k)
	}
	what := strings.TrimPrefix(cmd, "/")
	key, ok := c.pendingKey(m.Pending, what, k)
	if !ok {
		return nil
	}
	if cmd == "/discard" {
		if err := c.gw.Discard(ctx, c.sc, key); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "discarded %s: it is in no prompt, and the extractions already queued do not propose it again\n", key)
		return nil
	}
	f, err := c.gw.Keep(ctx, c.sc, key)
	if memory.ErrorCode(err) == memory.CodePendingNotFound {
		fmt.Fprintf(c.out, "nothing to keep: no pending %s (see /pending)\n", key)
		return nil
	}
	if err != nil {
		return err
	}
	replaced := ""
	if i := slices.IndexFunc(m.Facts, func(s memory.Fact) bool { return s.Key == f.Key }); i >= 0 {
		replaced = ", replacing " + f.Key + " = " + m.Facts[i].Value
	}
	fmt.Fprintf(c.out, "kept %s = %s%s: it is in the prompt from the next answer on\n", f.Key, f.Value, replaced)
	return nil
}

// forget removes the fact of key k when there is one, and else says that
// there is nothing to forget and changes nothing.
func (c *chatSession) forget(ctx context.Context, m memory.FactsAndPending, k string) error {
	if !slices.ContainsFunc(m.Facts, func(f memory.Fact) bool { return f.Key == k }) {
		fmt.Fprintf(c.out, "nothing to forget: no fact %s", k)
		if slices.ContainsFunc(m.Pending, func(f memory.Fact) bool { return f.Key == k }) {
			fmt.Fprintf(c.out, " (a pending fact waits under it: /discard %s drops it)", k)
		}
		fmt.Fprintln(c.out)
		return nil
	}
	if err := c.store.RemoveFact(ctx, c.sc, k); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "forgot %s\n", k)
	return nil
}

// forgetThread forgets what the current thread taught (the gateway's
// ForgetThread, as a host calls it when a chat is deleted) and says what
// went, or that there was nothing to forget.
func (c *chatSession) forgetThread(ctx context.Context) error {
	got, err := c.gw.ForgetThread(ctx, c.thread)
	if err != nil {
		return err
	}
	name := c.thread.ID
	if c.thread.Title != "" {
		name = "“" + c.thread.Title + "”"
	}
	if len(got.Facts)+len(got.Pending) == 0 {
		fmt.Fprintf(c.out, "nothing to forget: thread %s taught nothing (its older messages will teach nothing either)\n", name)
		return nil
	}
	fmt.Fprintf(c.out, "forgot what %s taught; its older messages bring none of it back:\n", name)
	for _, f := range got.Facts {
		fmt.Fprintf(c.out, "  forgot %s = %s\n", f.Key, f.Value)
	}
	for _, f := range got.Pending {
		fmt.Fprintf(c.out, "  discarded pending %s = %s\n", f.Key, f.Value)
	}
	return nil
}

// pendingKey returns the key of the pending fact that k names for the
// command what ("keep" or "discard"): the pending fact of key k, else the
// one pending fact of category k. When none or several match it says so
// and reports false.
func (c *chatSession) pendingKey(pending []memory.Fact, what, k string) (string, bool) {
	if slices.ContainsFunc(pending, func(f memory.Fact) bool { return f.Key == k }) {
		return k, true
	}
	var keys []string
	for _, f := range pending {
		if f.Category != "" && f.Category == k {
			keys = append(keys, f.Key)
		}
	}
	switch len(keys) {
	case 1:
		return keys[0], true
	case 0:
		fmt.Fprintf(c.out, "nothing to %s: no pending %s (see /pending)\n", what, k)
	default:
		fmt.Fprintf(c.out, "nothing to %s: %d pending facts are of category %s (%s); /%s KEY names one\n",
			what, len(keys), k, strings.Join(keys, ", "), what)
	}
	return "", false
}

// printPending lists the pending facts with what the user said and when,
// when each is dropped unless kept, and the stored fact that keeping it
// replaces; always says so when there is none, else only when there is
// some.
func (c *chatSession) printPending(ctx context.Context, always bool) error {
	pending, err := c.gw.Pending(ctx, c.sc)
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		if always {
			fmt.Fprintln(c.out, "nothing waits for your yes")
		}
		return nil
	}
	facts, err := c.store.GetFacts(ctx, c.sc)
	if err != nil {
		return err
	}
	stored := map[string]string{}
	for _, f := range facts {
		stored[f.Key] = f.Value
	}
	fmt.Fprintln(c.out, "  waiting for your yes (not in any prompt until you /keep KEY; /discard KEY drops it):")
	for _, p := range pending {
		fmt.Fprintf(c.out, "    %s\n", c.pendingLine(p))
		if v, ok := stored[p.Key]; ok {
			fmt.Fprintf(c.out, "      Keep replaces %s = %s\n", p.Key, v)
		}
	}
	return nil
}

// pendingLine is one pending fact for the terminal: its key, value and
// category, the user's words, when they were said and when the fact is
// dropped unless kept.
func (c *chatSession) pendingLine(p gateway.PendingFact) string {
	words, said, category := "", "said on ", ""
	if p.Evidence != "" {
		words = ", you said “" + p.Evidence + "”"
	}
	if p.Origin == memory.OriginImported {
		// SourceThreadTitle is the source the user named; SaidAt the import's request.
		words, said = ", imported from "+p.SourceThreadTitle, "imported on "
		if p.Evidence != "" {
			words += ", whose list said “" + p.Evidence + "”"
		}
	}
	if p.Category != "" || p.Origin != memory.OriginImported {
		category = " [" + p.Category + "]"
	}
	when := "will be dropped on " + p.Until.In(c.location()).Format("Mon 2 Jan") + " unless you keep it"
	if !p.SaidAt.IsZero() {
		when = said + p.SaidAt.In(c.location()).Format("2 Jan at 15:04") + "; " + when
	}
	return fmt.Sprintf("%s = %s%s%s; %s", p.Key, p.Value, category, words, when)
}

func (c *chatSession) printFacts(ctx context.Context) error {
	facts, err := c.store.GetFacts(ctx, c.sc)
	if err != nil {
		return err
	}
	if len(facts) == 0 {
		fmt.Fprintln(c.out, "nothing remembered")
	}
	for _, f := range facts {
		until := ""
		if !f.ValidUntil.IsZero() {
			until = "until " + f.ValidUntil.Format("Mon 2 Jan") + "; "
		}
		fmt.Fprintf(c.out, "  %s = %s (%s%s)\n", f.Key, f.Value, until, c.origin(f))
	}
	return nil
}

// origin says where a stored fact comes from and when: for a fact learned
// from a conversation, the user's words and when they were said, then
// when it was kept (a fact of a category that waits for the user's yes)
// or learned, when that is another minute; for a fact set by hand or by
// the remember tool, when.
func (c *chatSession) origin(f memory.Fact) string {
	loc := c.location()
	at := func(ref, t time.Time) string {
		if ref.In(loc).Format(time.DateOnly) == t.In(loc).Format(time.DateOnly) {
			return "at " + t.In(loc).Format("15:04")
		}
		return "on " + t.In(loc).Format("2 Jan at 15:04")
	}
	switch {
	case f.Origin == memory.OriginManual:
		return "set by hand on " + f.UpdatedAt.In(loc).Format("2 Jan at 15:04")
	case f.Origin == memory.OriginRememberTool:
		return "remembered with your approval on " + f.UpdatedAt.In(loc).Format("2 Jan at 15:04")
	}
	said := "learned"
	switch {
	case f.Origin == memory.OriginImported && f.Evidence != "":
		said = "imported from " + f.SourceThreadTitle + ", whose list said “" + f.Evidence + "”,"
	case f.Origin == memory.OriginImported:
		said = "imported from " + f.SourceThreadTitle + ","
	case f.Evidence != "":
		said = "you said “" + f.Evidence + "”"
	}
	if f.SaidAt.IsZero() {
		return said + ", learned on " + f.UpdatedAt.In(loc).Format("2 Jan at 15:04")
	}
	if f.Evidence == "" {
		said = "said"
	}
	out := said + " on " + f.SaidAt.In(loc).Format("2 Jan at 15:04")
	// An imported fact always waited for the user's yes.
	kept := f.Origin == memory.OriginImported || f.Category != "" && slices.Contains(c.store.Config().PendingCategories, f.Category)
	switch {
	case kept:
		out += ", kept " + at(f.SaidAt, f.UpdatedAt)
	case f.UpdatedAt.In(loc).Format("2006-01-02 15:04") != f.SaidAt.In(loc).Format("2006-01-02 15:04"):
		out += ", learned " + at(f.SaidAt, f.UpdatedAt)
	}
	return out
}

// location is the time zone the chat shows times in: the machine's,
// unless a test set one.
func (c *chatSession) location() *time.Location {
	if c.loc != nil {
		return c.loc
	}
	return time.Local
}

// diff says what changed from before to after: +key = value, ~key = value,
// -key.
func diff(before, after []memory.Fact) []string {
	old := map[string]string{}
	for _, f := range before {
		old[f.Key] = f.Value
	}
	var out []string
	for _, f := range after {
		v, ok := old[f.Key]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("learned %s = %s", f.Key, f.Value))
		case v != f.Value:
			out = append(out, fmt.Sprintf("updated %s = %s", f.Key, f.Value))
		}
		delete(old, f.Key)
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		out = append(out, "forgot "+k)
	}
	return out
}

// memoryUpdated asks the store what the current thread's extraction set
// since since (the gateway's Changes) and, when it set something,
// says it with its Undo: "Memory updated: home city → Porto · /undo".
func (c *chatSession) memoryUpdated(ctx context.Context, since time.Time) error {
	got, err := c.gw.Changes(ctx, c.thread, since)
	if err != nil || len(got) == 0 {
		return err
	}
	c.updated, c.undoThread = got, c.thread
	parts := make([]string, 0, len(got))
	for _, ch := range got {
		parts = append(parts, strings.ReplaceAll(ch.Key, "_", " ")+" → "+ch.Value)
	}
	fmt.Fprintf(c.out, "  Memory updated: %s · /undo\n", strings.Join(parts, "; "))
	return nil
}

// undo undoes the changes "Memory updated" last showed
// (the gateway's Undo): a replaced value comes back, a new fact goes,
// and a message of those turns sent again cannot set them again; a
// change whose earlier value is no longer kept is not undone.
func (c *chatSession) undo(ctx context.Context) error {
	if len(c.updated) == 0 {
		fmt.Fprintln(c.out, "nothing to undo")
		return nil
	}
	for _, ch := range c.updated {
		u, err := c.gw.Undo(ctx, c.undoThread, ch.Key)
		if memory.ErrorCode(err) == memory.CodeEarlierValueUnknown {
			fmt.Fprintf(c.out, "not undone: the value %s had before is no longer kept\n", ch.Key)
			continue
		}
		if err != nil {
			return err
		}
		switch {
		case u.Restored != "":
			fmt.Fprintf(c.out, "undone: %s is %s again\n", u.Key, u.Restored)
		case u.Removed:
			fmt.Fprintf(c.out, "undone: forgot %s = %s\n", u.Key, ch.Value)
		default:
			fmt.Fprintf(c.out, "nothing to undo: %s changed since\n", u.Key)
		}
	}
	c.updated = nil
	return nil
}
