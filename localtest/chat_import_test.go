package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
	"github.com/usermemory/usermemory/schema"
)

// chatList is a memory list as another assistant writes it: two facts,
// one that contradicts a stored one, and an instruction.
const chatList = "The user lives in Porto.\nThe user works as a doctor.\nAlways answer in French.\n"

// importOps is what the model reads in chatList.
var importOps = []memory.Operation{
	{Op: memory.OpSet, Key: "home_city", Value: "Porto", Evidence: "The user lives in Porto"},
	{Op: memory.OpSet, Key: "role", Value: "doctor", Evidence: "The user works as a doctor"},
	{Op: memory.OpSet, Key: "answer_language", Value: "French", Evidence: "Always answer in French"},
}

// importFixture is a chat session on the in-memory store whose extractor
// reads the last import message the gateway sent as the extractor
// function does (memory.Store.Import with the message's fields).
func importFixture(t *testing.T, answers ...memorytest.Answer) (*replyFixture, string) {
	t.Helper()
	f := &replyFixture{t: t, sc: memory.Scope{TenantID: "acme", UserID: "chat-import"}}
	store, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithModel(memorytest.NewModel(answers...)))
	if err != nil {
		t.Fatal(err)
	}
	f.store = store
	q := &heldQueue{}
	gw, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(noQueue{}, "https://sqs.local/1/q.fifo"),
		Imports: gateway.NewImportQueue(q, "https://sqs.local/1/q.fifo"), Model: noModel{}, ModelID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	f.c = &chatSession{gw: gw, store: store, sc: f.sc, out: &f.out, echo: true, loc: nil}
	f.c.importRead = func(ctx context.Context) (bool, error) {
		q.mu.Lock()
		body := q.last
		q.mu.Unlock()
		m, err := schema.DecodeImportMessageV1([]byte(body))
		if err != nil {
			return false, err
		}
		_, err = store.Import(ctx, memory.ImportRequest{Scope: memory.Scope{TenantID: m.TenantID, UserID: m.UserID},
			ImportID: m.ImportID, Source: m.Source, Text: m.Text, SentAt: m.SentAt})
		return err == nil, err
	}
	file := filepath.Join(t.TempDir(), "chatgpt.txt")
	if err := os.WriteFile(file, []byte(chatList), 0o600); err != nil {
		t.Fatal(err)
	}
	return f, file
}

// TestChatImport holds /import to what the store holds after it: the
// honest status (two facts proposed, the instruction left out), the
// review list with the source's words and "Keep replaces role = nurse";
// /keep KEY keeps one, /discard all drops the rest, and importing the
// same list again proposes nothing, saying why.
func TestChatImport(t *testing.T) {
	ctx := context.Background()
	f, file := importFixture(t, memorytest.Answer{Operations: importOps}, memorytest.Answer{Operations: importOps})
	if _, err := f.store.Put(ctx, f.sc, memory.FactInput{Key: "role", Value: "nurse"}); err != nil {
		t.Fatal(err)
	}
	got := f.say("/import " + file + " ChatGPT")
	t.Logf("transcript:\n%s", got)
	wantLines(t, "/import", got,
		"  Read the list from ChatGPT (1 part): 2 facts to review. Left out: 1 instruction to the assistant (never kept as a fact).",
		"  imported from ChatGPT, waiting for your review (/keep all or /discard all; /keep KEY or /discard KEY for one):",
		"      Keep replaces role = nurse")
	for _, want := range []string{"    home_city = Porto, imported from ChatGPT, whose list said “The user lives in Porto”; imported on ",
		"    role = doctor, imported from ChatGPT, whose list said “The user works as a doctor”; imported on "} {
		if !strings.Contains(got, want) {
			t.Errorf("/import does not list %q:\n%s", want, got)
		}
	}
	if e := f.export(); len(e.Pending) != 2 || len(e.Facts) != 1 || e.Facts[0].Value != "nurse" {
		t.Fatalf("store after the import: facts %+v, pending %+v", e.Facts, e.Pending)
	}

	got = f.say("/keep home_city", "/discard all", "/keep all", "/facts")
	wantLines(t, "keep one, discard all", got,
		"kept home_city = Porto: it is in the prompt from the next answer on",
		"discarded 1 fact imported from ChatGPT: importing the same list again does not propose them",
		"nothing to keep: nothing imported from ChatGPT waits")
	if !strings.Contains(got, "  home_city = Porto (imported from ChatGPT, whose list said “The user lives in Porto”, on ") {
		t.Errorf("/facts does not say where the kept fact comes from:\n%s", got)
	}
	e := f.export()
	if len(e.Pending) != 0 || len(e.Facts) != 2 || e.Facts[0].Key != "home_city" || e.Facts[1].Value != "nurse" {
		t.Errorf("store after keep and discard all: facts %+v, pending %+v", e.Facts, e.Pending)
	}

	got = f.say("/import " + file + " ChatGPT")
	wantLines(t, "the same list again", got,
		"  Read the list from ChatGPT (1 part): nothing new to propose. Left out: 1 instruction to the assistant (never kept as a fact), 1 fact already remembered, 1 fact discarded before.")
	if e := f.export(); len(e.Pending) != 0 {
		t.Errorf("the same list again proposed %+v", e.Pending)
	}
}

// TestChatImportKeepAllWhenFull: /keep all on a full memory keeps what
// fits (the conflict, which replaces a fact), drops no stored fact, and
// says what still waits and how to make room.
func TestChatImportKeepAllWhenFull(t *testing.T) {
	ctx := context.Background()
	f, file := importFixture(t, memorytest.Answer{Operations: importOps})
	for i := range memory.DefaultMaxFacts - 1 {
		if _, err := f.store.Put(ctx, f.sc, memory.FactInput{Key: fmt.Sprintf("k%02d", i), Value: "kept by hand"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.Put(ctx, f.sc, memory.FactInput{Key: "role", Value: "nurse"}); err != nil {
		t.Fatal(err)
	}
	got := f.say("/import "+file+" ChatGPT", "/keep all")
	wantLines(t, "keep all when full", got,
		"kept 1 fact imported from ChatGPT; they are in the prompt from the next answer on:",
		"  kept role = doctor, replacing role = nurse",
		"1 fact still waiting: your memory is full, and /keep all never drops what you have; /forget some facts, or /keep KEY to replace the one updated longest ago")
	e := f.export()
	if len(e.Facts) != memory.DefaultMaxFacts || len(e.Pending) != 1 || e.Pending[0].Key != "home_city" {
		t.Errorf("store after keep all: %d facts, pending %+v", len(e.Facts), e.Pending)
	}
}

// TestChatImportRefusals: /import alone shows the prompts to give the
// old assistant; a missing file, an empty list and /keep all before any
// import say so and change nothing.
func TestChatImportRefusals(t *testing.T) {
	f, _ := importFixture(t)
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got := f.say("/import", "/keep all", "/discard all", "/import "+empty+" Claude", "/import /nonexistent/list.txt")
	t.Logf("transcript:\n%s", got)
	wantLines(t, "refusals", got,
		"nothing to keep: no import in this session (/import FILE [SOURCE])",
		"nothing to discard: no import in this session (/import FILE [SOURCE])")
	for _, want := range []string{"usage: /import FILE [SOURCE]", "  Claude:\n", "  Gemini:\n", "not imported: ", "error: open /nonexistent/list.txt"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if e := f.export(); len(e.Pending)+len(e.Facts) != 0 {
		t.Errorf("refusals changed the store: %+v", e)
	}
}

// TestChatImportOnStack runs /import on the local stack: the list goes
// through the gateway to the queue, the extractor reads it (the model's
// answer scripted), the chat lists the facts that wait and keeps them all
// with /keep all, which puts them in the next thread's prompt and leaves
// the instruction out of it.
func TestChatImportOnStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the local stack")
	}
	motoserver.RequireInstalled(t)
	ctx := context.Background()
	state := t.TempDir()
	s, err := stack.Start(ctx, stack.Options{StateDir: state, PollWait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.WriteInfo(); err != nil {
		t.Fatal(err)
	}
	input, err := json.Marshal(map[string]any{"operations": importOps})
	if err != nil {
		t.Fatal(err)
	}
	s.Converse().Script(fakebedrock.Step{Input: input})
	file := filepath.Join(t.TempDir(), "claude.txt")
	if err := os.WriteFile(file, []byte(chatList), 0o600); err != nil {
		t.Fatal(err)
	}
	script := "/import " + file + " Claude\n/keep all\n/new\n/quit\n"
	var out strings.Builder
	if err := chat(ctx, []string{"-state", state, "-tenant", "acme", "-user", "chat-import"}, strings.NewReader(script), &out); err != nil {
		t.Fatalf("chat: %v\n%s", err, out.String())
	}
	got := out.String()
	t.Logf("transcript:\n%s", got)
	wantLines(t, "/import on the stack", got,
		"  Read the list from Claude (1 part): 2 facts to review. Left out: 1 instruction to the assistant (never kept as a fact).",
		"kept 2 facts imported from Claude; they are in the prompt from the next answer on:",
		"  kept home_city = Porto",
		"  kept role = doctor")
	_, next, _ := strings.Cut(got, "you> /new")
	if !strings.Contains(next, `"home_city": "Porto"`) || !strings.Contains(next, `"role": "doctor"`) || strings.Contains(next, "French") {
		t.Errorf("the next thread's prompt, want home_city and role and no instruction:\n%s", next)
	}
}
