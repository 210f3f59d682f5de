package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
	"github.com/usermemory/usermemory/schema"
)

// importQueue keeps the bodies of the import messages sent to it.
type importQueue struct{ bodies []string }

func (q *importQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.bodies = append(q.bodies, *in.MessageBody)
	return &sqs.SendMessageOutput{}, nil
}

const pasted = "The user lives in Porto.\nThe user works as a doctor.\nAlways answer in French."

// TestImportReviewKeepDiscard: Import sends one import message with the
// text and the source and answers queued; once the extractor read it
// (memory.Store.Import, as the extractor calls it), ImportReview lists
// its two pending facts, with the stored role it would replace, and says
// what was left out; keeping one and discarding the rest leave the kept
// one in the prompt and the other out of it.
func TestImportReviewKeepDiscard(t *testing.T) {
	ctx := context.Background()
	reader := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "home_city", Value: "Porto", Evidence: "The user lives in Porto"},
		{Op: memory.OpSet, Key: "role", Value: "doctor", Evidence: "The user works as a doctor"},
		{Op: memory.OpSet, Key: "answer_language", Value: "French", Evidence: "Always answer in French"},
	}})
	store, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithModel(reader))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, ana, memory.FactInput{Key: "role", Value: "nurse"}); err != nil {
		t.Fatal(err)
	}
	q := &importQueue{}
	g, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(&queue{}, "https://sqs.local/1/q.fifo"),
		Imports: gateway.NewImportQueue(q, "https://sqs.local/1/q.fifo"), Model: &model{}, ModelID: "chat-model"})
	if err != nil {
		t.Fatal(err)
	}
	mark, err := g.Import(ctx, ana, memory.ImportText{Source: "ChatGPT", Text: pasted})
	if err != nil {
		t.Fatal(err)
	}
	if mark.Status != memory.ImportQueued || !memory.ValidID(mark.ID) || mark.Source != "ChatGPT" || len(q.bodies) != 1 {
		t.Fatalf("Import = %+v with %d messages; want queued, a valid ID, one message", mark, len(q.bodies))
	}
	msg, err := schema.DecodeImportMessageV1([]byte(q.bodies[0]))
	if err != nil || msg.ImportID != mark.ID || msg.Text != pasted || msg.Source != "ChatGPT" || msg.UserID != ana.UserID {
		t.Fatalf("message = %+v, %v; want the import's ID, text, source and user", msg, err)
	}
	if r, err := g.ImportReview(ctx, ana, mark.ID); err != nil || r.Mark.Status != memory.ImportQueued || len(r.Pending) != 0 {
		t.Fatalf("review before it is read = %+v, %v; want queued", r, err)
	}

	if _, err := store.Import(ctx, memory.ImportRequest{Scope: ana, ImportID: msg.ImportID, Source: msg.Source, Text: msg.Text, SentAt: msg.SentAt}); err != nil {
		t.Fatal(err)
	}
	r, err := g.ImportReview(ctx, ana, mark.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mark.Status != memory.ImportDone || r.Mark.Proposed != 2 || r.Mark.LeftOut.Instructions != 1 || len(r.Pending) != 2 {
		t.Fatalf("review = %+v; want done, 2 proposed, 1 instruction left out", r)
	}
	if r.Replaces["role"] != "nurse" || len(r.Replaces) != 1 {
		t.Errorf("replaces = %v, want role = nurse only", r.Replaces)
	}
	if got := gateway.ImportSummary(r.Mark); !strings.Contains(got, "2 facts to review") || !strings.Contains(got, "1 instruction to the assistant") {
		t.Errorf("summary = %q", got)
	}
	if _, err := g.Keep(ctx, ana, "home_city"); err != nil {
		t.Fatal(err)
	}
	if n, err := g.DiscardImport(ctx, ana, mark.ID); err != nil || n != 1 {
		t.Errorf("DiscardImport = %d, %v; want 1 (role)", n, err)
	}
	if kept, err := g.KeepImport(ctx, ana, mark.ID); err != nil || len(kept) != 0 {
		t.Errorf("KeepImport after the discard = %+v, %v; want nothing left", kept, err)
	}
	prompt, err := g.SystemPrompt(ctx, ana)
	if err != nil || !strings.Contains(prompt, "Porto") || strings.Contains(prompt, "doctor") || !strings.Contains(prompt, "nurse") {
		t.Errorf("prompt = %q, %v; want Porto and nurse, not doctor", prompt, err)
	}
}

// TestImportRefusals: a list without a source, or without a queue to
// send it to, is refused before anything is sent; an unknown import is
// CodeImportNotFound.
func TestImportRefusals(t *testing.T) {
	ctx := context.Background()
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	q := &importQueue{}
	cfg := gateway.Config{Store: store, Producer: producer.New(&queue{}, "https://sqs.local/1/q.fifo"),
		Imports: gateway.NewImportQueue(q, "https://sqs.local/1/q.fifo"), Model: &model{}, ModelID: "chat-model"}
	g, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Import(ctx, ana, memory.ImportText{Text: pasted}); memory.ErrorCode(err) != memory.CodeInvalidImport {
		t.Errorf("no source: %v, want CodeInvalidImport", err)
	}
	if _, err := g.Import(ctx, ana, memory.ImportText{Source: "Claude", Text: strings.Repeat("The user likes tea.\n", memory.MaxImportChars)}); memory.ErrorCode(err) != memory.CodeImportTooLong {
		t.Errorf("too long: %v, want CodeImportTooLong", err)
	}
	if len(q.bodies) != 0 {
		t.Errorf("%d messages sent for refused imports", len(q.bodies))
	}
	if _, err := g.ImportReview(ctx, ana, memory.NewImportID(time.Now())); memory.ErrorCode(err) != memory.CodeImportNotFound {
		t.Errorf("an unknown import: %v, want CodeImportNotFound", err)
	}
	cfg.Imports = nil
	g, _ = gateway.New(cfg)
	if _, err := g.Import(ctx, ana, memory.ImportText{Source: "Claude", Text: pasted}); err != gateway.ErrNoImportQueue {
		t.Errorf("no queue: %v, want ErrNoImportQueue", err)
	}
}

// TestImportDailyLimit: once memory.MaxImportsPerDay imports were read
// in 24 hours, the next is refused before it is sent, with
// CodeImportLimit and a message for the user.
func TestImportDailyLimit(t *testing.T) {
	ctx := context.Background()
	answers := make([]memorytest.Answer, memory.MaxImportsPerDay)
	store, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithModel(memorytest.NewModel(answers...)))
	if err != nil {
		t.Fatal(err)
	}
	q := &importQueue{}
	g, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(&queue{}, "https://sqs.local/1/q.fifo"),
		Imports: gateway.NewImportQueue(q, "https://sqs.local/1/q.fifo"), Model: &model{}, ModelID: "chat-model"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range memory.MaxImportsPerDay {
		mark, err := g.Import(ctx, ana, memory.ImportText{Source: "Gemini", Statements: []string{"The user likes tea."}})
		if err != nil {
			t.Fatalf("import %d: %v", i+1, err)
		}
		if _, err := store.Import(ctx, memory.ImportRequest{Scope: ana, ImportID: mark.ID, Source: mark.Source, Text: "The user likes tea.", SentAt: mark.RequestedAt}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = g.Import(ctx, ana, memory.ImportText{Source: "Gemini", Text: "The user likes tea."})
	var me *memory.Error
	if !errors.As(err, &me) || me.Code != memory.CodeImportLimit || me.UserMessage == "" {
		t.Errorf("import %d: %v, want CodeImportLimit with a user message", memory.MaxImportsPerDay+1, err)
	}
	if len(q.bodies) != memory.MaxImportsPerDay {
		t.Errorf("%d messages sent, want %d", len(q.bodies), memory.MaxImportsPerDay)
	}
}

// TestImportSummary: the line says what failed and why in words, and
// counts what was left out by reason.
func TestImportSummary(t *testing.T) {
	for _, c := range []struct {
		mark memory.ImportMark
		want string
	}{
		{memory.ImportMark{Source: "Gemini", Status: memory.ImportRefused, Reason: "tenant_budget"},
			"The list from Gemini was not imported: the service's reading budget for today is spent; try again tomorrow. Nothing was proposed."},
		{memory.ImportMark{Source: "Claude", Status: memory.ImportDone, Parts: 1, LeftOut: memory.ImportLeftOut{Known: 2, Secrets: 1}},
			"Read the list from Claude (1 part): nothing new to propose. Left out: 1 secret (never kept), 2 facts already remembered."},
		{memory.ImportMark{Source: "ChatGPT", Status: memory.ImportDone, Parts: 3, Proposed: 1, LeftOut: memory.ImportLeftOut{Skipped: 1, OverCap: 29}},
			"Read the list from ChatGPT (3 parts): 1 fact to review. Left out: 1 line not read as a fact about you, " +
				"29 facts over the most that can wait for review (keep or discard these, then import again)."},
		{memory.ImportMark{Status: memory.ImportQueued}, "The list is being read."},
	} {
		if got := gateway.ImportSummary(c.mark); got != c.want {
			t.Errorf("%+v: %q, want %q", c.mark, got, c.want)
		}
	}
}
