package main

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
	"github.com/usermemory/usermemory/schema"
)

// saidModel is a chat model that answers every message with "Noted.".
type saidModel struct{}

func (saidModel) Converse(context.Context, *bedrockruntime.ConverseInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	return &bedrockruntime.ConverseOutput{StopReason: types.StopReasonEndTurn,
		Output: &types.ConverseOutputMemberMessage{Value: types.Message{Role: types.ConversationRoleAssistant,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Noted."}}}}}, nil
}

// heldQueue keeps the last extraction message sent.
type heldQueue struct {
	mu   sync.Mutex
	last string
}

func (q *heldQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.last = aws.ToString(in.MessageBody)
	return &sqs.SendMessageOutput{MessageId: aws.String("m")}, nil
}

// replyFixture is a chat session on the in-memory store, whose extractor
// reads the last message the gateway sent as the extractor function does
// (its turns, counts and sentAt), at a clock the test sets.
type replyFixture struct {
	t     *testing.T
	store *memory.Store
	sc    memory.Scope
	now   time.Time
	c     *chatSession
	out   strings.Builder
}

func newReplyFixture(t *testing.T, answers ...memorytest.Answer) *replyFixture {
	f := &replyFixture{t: t, sc: memory.Scope{TenantID: "acme", UserID: "chat-words"},
		now: time.Date(2026, 12, 3, 19, 31, 0, 0, time.UTC)}
	clock := func() time.Time { return f.now }
	store, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithClock(clock), memory.WithModel(memorytest.NewModel(answers...)))
	if err != nil {
		t.Fatal(err)
	}
	f.store = store
	q := &heldQueue{}
	gw, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(q, "https://sqs.local/1/q.fifo", producer.WithClock(clock)),
		Model: saidModel{}, ModelID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	f.c = &chatSession{gw: gw, store: store, sc: f.sc, out: &f.out, echo: true, idleRead: 15 * time.Minute, loc: time.UTC}
	f.c.extracted = func(ctx context.Context) (bool, error) {
		q.mu.Lock()
		body := q.last
		q.mu.Unlock()
		m, err := schema.DecodeExtractionMessageV1([]byte(body))
		if err != nil {
			return false, err
		}
		req := memory.ExtractRequest{Scope: memory.Scope{TenantID: m.TenantID, UserID: m.UserID}, ThreadID: m.ThreadID,
			PreviousTurnCount: m.PreviousTurnCount, TurnCount: m.TurnCount, Uncounted: m.Uncounted, SentAt: m.SentAt}
		for _, turn := range m.Turns {
			req.Turns = append(req.Turns, memory.Turn{Role: turn.Role, Text: turn.Text})
		}
		_, err = store.Extract(ctx, req)
		return err == nil, err
	}
	return f
}

// say runs the chat on lines and returns what it printed.
func (f *replyFixture) say(lines ...string) string {
	f.t.Helper()
	f.out.Reset()
	f.c.in = bufio.NewScanner(strings.NewReader(strings.Join(lines, "\n") + "\n/quit\n"))
	if err := f.c.run(context.Background()); err != nil {
		f.t.Fatalf("run: %v\n%s", err, f.out.String())
	}
	return f.out.String()
}

// export is everything stored for the user.
func (f *replyFixture) export() memory.Export {
	f.t.Helper()
	e, err := f.store.Export(context.Background(), f.sc)
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

func wantLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("%s: no line %q in:\n%s", what, w, got)
		}
	}
}

// TestChatRepliesSayWhatHappened holds every reply of the chat to what
// the store holds after it: facts that went pending are said to wait (not
// "nothing new"), each with when it was said, when it will be dropped and
// the stored fact Keep replaces; a turn that is not due says when it will
// be read; forgetting or discarding what is not there says so and changes
// nothing; /keep takes the category of one pending fact, and a kept fact
// shows when it was said and when it was kept.
func TestChatRepliesSayWhatHappened(t *testing.T) {
	ctx := context.Background()
	f := newReplyFixture(t, memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "role", Value: "catholic", Evidence: "I'm catholic", Category: memory.CategoryReligion},
		{Op: memory.OpSet, Key: "health_condition", Value: "diabetes", Evidence: "I have diabetes", Category: memory.CategoryHealth},
	}})
	f.now = f.now.Add(-time.Hour)
	if _, err := f.store.Put(ctx, f.sc, memory.FactInput{Key: "role", Value: "nurse"}); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Hour)

	got := f.say("I'm catholic and I have diabetes", "Thanks")
	if strings.Contains(got, "learned nothing new") {
		t.Errorf("two facts went pending, and the chat says nothing was learned:\n%s", got)
	}
	wantLines(t, "after the due answer", got,
		"  learned 2 facts that wait for your yes: health_condition, role",
		"    health_condition = diabetes [health], you said “I have diabetes”; said on 3 Dec at 19:31; will be dropped on Thu 10 Dec unless you keep it",
		"    role = catholic [religion], you said “I'm catholic”; said on 3 Dec at 19:31; will be dropped on Thu 10 Dec unless you keep it",
		"      Keep replaces role = nurse",
		"  (extraction message sent; not due at turn 4: read at the next due turn, or after the thread is idle for 15 min)")
	if strings.Count(got, "Keep replaces") != 1 {
		t.Errorf("Keep replaces said of a key that is not stored:\n%s", got)
	}
	if e := f.export(); len(e.Pending) != 2 || len(e.Facts) != 1 || e.Facts[0].Value != "nurse" {
		t.Fatalf("store after the extraction: facts %+v, pending %+v", e.Facts, e.Pending)
	}

	before := f.export()
	got = f.say("/forget nonexistent_key", "/discard nonexistent_key", "/discard politics", "/forget health_condition")
	wantLines(t, "nothing there", got,
		"nothing to forget: no fact nonexistent_key",
		"nothing to discard: no pending nonexistent_key (see /pending)",
		"nothing to discard: no pending politics (see /pending)",
		"nothing to forget: no fact health_condition (a pending fact waits under it: /discard health_condition drops it)")
	after := f.export()
	before.At, after.At = time.Time{}, time.Time{}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("forgetting and discarding nothing changed the store (-before +after):\n%s", diff)
	}

	f.now = time.Date(2026, 12, 3, 19, 35, 0, 0, time.UTC)
	got = f.say("/keep health", "/facts", "/keep role", "/discard role", "/keep role")
	wantLines(t, "keep by category, then by key", got,
		"kept health_condition = diabetes: it is in the prompt from the next answer on",
		"  health_condition = diabetes (you said “I have diabetes” on 3 Dec at 19:31, kept at 19:35)",
		"  role = nurse (set by hand on 3 Dec at 18:31)",
		"kept role = catholic, replacing role = nurse: it is in the prompt from the next answer on",
		"nothing to discard: no pending role (see /pending)",
		"nothing to keep: no pending role (see /pending)")
	e := f.export()
	if len(e.Pending) != 0 || len(e.Facts) != 2 || e.Facts[1].Key != "role" || e.Facts[1].Value != "catholic" {
		t.Errorf("store after the keeps: facts %+v, pending %+v", e.Facts, e.Pending)
	}
	if len(e.Forgotten) != 0 {
		t.Errorf("a discard of nothing left a tombstone: %+v", e.Forgotten)
	}
}

// TestChatKeepCategoryAmbiguous: /keep CATEGORY with two pending facts of
// that category names both and keeps neither; /discard KEY then drops one.
func TestChatKeepCategoryAmbiguous(t *testing.T) {
	f := newReplyFixture(t, memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "condition", Value: "asthma", Evidence: "I have asthma", Category: memory.CategoryHealth},
		{Op: memory.OpSet, Key: "medication", Value: "salbutamol", Evidence: "I take salbutamol", Category: memory.CategoryHealth},
	}})
	f.say("I have asthma and I take salbutamol")
	got := f.say("/keep health", "/discard health", "/discard medication")
	wantLines(t, "ambiguous category", got,
		"nothing to keep: 2 pending facts are of category health (condition, medication); /keep KEY names one",
		"nothing to discard: 2 pending facts are of category health (condition, medication); /discard KEY names one",
		"discarded medication: it is in no prompt, and the extractions already queued do not propose it again")
	e := f.export()
	if len(e.Facts) != 0 || len(e.Pending) != 1 || e.Pending[0].Key != "condition" {
		t.Errorf("store: facts %+v, pending %+v; want condition alone pending", e.Facts, e.Pending)
	}
}

// TestChatNothingLearnedIsSaidOnlyWhenTrue: an extraction that changes
// nothing says so; one still running when the chat stops waiting claims
// nothing.
func TestChatNothingLearnedIsSaidOnlyWhenTrue(t *testing.T) {
	f := newReplyFixture(t, memorytest.Answer{})
	got := f.say("Hello")
	wantLines(t, "an extraction that changed nothing", got, "  (the extractor learned nothing new)")

	f = newReplyFixture(t)
	f.c.extracted = func(context.Context) (bool, error) { return false, nil }
	got = f.say("Hello")
	if strings.Contains(got, "learned") || strings.Contains(got, "memory:") {
		t.Errorf("the extraction had not finished, and the chat says what it learned:\n%s", got)
	}
	f.c.extracted = func(context.Context) (bool, error) { return false, errors.New("queue gone") }
	if got = f.say("Hello"); !strings.Contains(got, "error: queue gone") {
		t.Errorf("a failed wait is not reported:\n%s", got)
	}
}

// TestNotDueSaysWhenTheTurnsAreRead: the idle read's setting decides the
// sentence.
func TestNotDueSaysWhenTheTurnsAreRead(t *testing.T) {
	for env, want := range map[string]string{
		"900": "extraction message sent; not due at turn 4: read at the next due turn, or after the thread is idle for 15 min",
		"90":  "extraction message sent; not due at turn 4: read at the next due turn, or after the thread is idle for 1m30s",
		"0":   "extraction message sent; not due at turn 4: read at the next due turn (the idle read is off)",
		"":    "extraction message sent; not due at turn 4: read at the next due turn, or after the thread is idle for the idle-read time",
	} {
		if got := notDue(4, idleReadOf(map[string]string{envIdleRead: env})); got != want {
			t.Errorf("IDLE_READ_SECONDS %q: %q, want %q", env, got, want)
		}
	}
}

// TestTokenNoteSaysUntilWhen: the token command's note says until when
// the token is taken, and that a token minted expired is refused.
func TestTokenNoteSaysUntilWhen(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.Local)
	if got, want := tokenNote("ana", "acme", now, time.Hour), "token of user ana in tenant acme, valid until 11:00:00 (1h0m0s); after that the API refuses it: run this command again for a new one"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := tokenNote("ana", "acme", now, -time.Minute); !strings.Contains(got, "already expired") || strings.Contains(got, "valid until") {
		t.Errorf("note of a token minted expired: %q", got)
	}
}

// TestChatForgetThread: /forget-thread forgets what the current thread
// taught, a fact and a pending fact, says so, and leaves the fact set by
// hand; a second one has nothing to forget and says so.
func TestChatForgetThread(t *testing.T) {
	ctx := context.Background()
	f := newReplyFixture(t, memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "pet", Value: "cat", Evidence: "I have a cat"},
		{Op: memory.OpSet, Key: "condition", Value: "asthma", Evidence: "I have asthma", Category: memory.CategoryHealth},
	}})
	if _, err := f.store.Put(ctx, f.sc, memory.FactInput{Key: "role", Value: "nurse"}); err != nil {
		t.Fatal(err)
	}
	got := f.say("I have a cat. I have asthma", "/forget-thread", "/forget-thread")
	wantLines(t, "forget the thread", got,
		"forgot what “I have a cat. I have…” taught; its older messages bring none of it back:",
		"  forgot pet = cat",
		"  discarded pending condition = asthma",
		"nothing to forget: thread “I have a cat. I have…” taught nothing (its older messages will teach nothing either)")
	e := f.export()
	if len(e.Pending) != 0 || len(e.Facts) != 1 || e.Facts[0].Key != "role" {
		t.Errorf("store after /forget-thread: facts %+v, pending %+v; want role alone", e.Facts, e.Pending)
	}
}
