package main

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestDueMessages holds the beat's count by thread length to the
// reference's beat at ExtractEveryTurns 6, two turns an answer: due after
// the first answer, then when a message crosses 6, 12, 18 turns.
func TestDueMessages(t *testing.T) {
	store, err := memory.New(memorytest.NewRepo(), memory.Config{ExtractEveryTurns: 6})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]struct {
		due  int
		last bool
	}{1: {1, true}, 2: {1, false}, 3: {2, true}, 5: {2, false}, 6: {3, true}, 7: {3, false}, 9: {4, true}} {
		if due, last := dueMessages(store, n); due != want.due || last != want.last {
			t.Errorf("a thread of %d answers: %d due, last due %v; want %d, %v", n, due, last, want.due, want.last)
		}
	}
}

// TestIdleDay checks the idle read's day: every not-due message sends a
// copy, once at an idle time of up to 15 minutes and once more per 15
// minutes beyond; the copies that do not read are dropped; off, nothing.
func TestIdleDay(t *testing.T) {
	r := reportInput{idle: idleInput{notDueBytes: make([]int, 12), reads: 4}}
	if d := idleDayOf(900, r); d.notDue != 12 || d.sends != 1 || d.reads != 4 || d.dropped != 8 {
		t.Errorf("idle day at 900 s = %+v, want 12 copies sent once, 4 reads, 8 dropped", d)
	}
	if d := idleDayOf(1800, r); d.sends != 2 {
		t.Errorf("idle day at 1800 s = %+v, want each copy sent twice", d)
	}
	if d := idleDayOf(0, r); d != (idleDay{}) {
		t.Errorf("idle day off = %+v, want nothing", d)
	}
}

// TestIdleReadsAreTheThreadsLeftUnread measures a day at two thread
// lengths and holds the idle reads (model calls) to the threads whose
// last message is not due: all 4 threads of 5 answers (turns 7 to 10
// unread), none of 4 threads of 6 answers (the last message crosses 12).
func TestIdleReadsAreTheThreadsLeftUnread(t *testing.T) {
	endpoint := motoserver.Endpoint(t)
	for answers, want := range map[int]int{20: 4, 24: 0} {
		p := defaultProfile()
		p.answersPerDay = answers
		var got reportInput
		if err := measure(context.Background(), endpoint, p, func(_ memory.Config, r reportInput) { got = r }); err != nil {
			t.Fatal(err)
		}
		if got.idle.reads != want || len(got.idle.tails) != want {
			t.Errorf("%d answers over %d threads: %d idle reads of %d tails, want %d", answers, p.threadsPerDay, got.idle.reads, len(got.idle.tails), want)
		}
		if notDue := answers - got.extractionsPerDay; len(got.idle.notDueBytes) != notDue {
			t.Errorf("%d answers: %d messages not due noted, want %d (the messages less the extractions)", answers, len(got.idle.notDueBytes), notDue)
		}
		if want > 0 && (got.idle.inTokens <= 0 || got.idle.readDynamo["PutItem"] != want) {
			t.Errorf("%d answers: idle read prompt %.0f tokens, requests %v: want a prompt and one PutItem a read", answers, got.idle.inTokens, got.idle.readDynamo)
		}
	}
}

// TestIdleReadSecondsIsTheTemplates holds the profile's idle time to the
// default of template.yaml's IdleReadSeconds.
func TestIdleReadSecondsIsTheTemplates(t *testing.T) {
	tpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := tpl.ParameterDefault("IdleReadSeconds")
	if !ok {
		t.Fatal("template.yaml has no IdleReadSeconds parameter")
	}
	if n, err := strconv.Atoi(v); err != nil || n != defaultProfile().idleReadSeconds {
		t.Errorf("template.yaml's IdleReadSeconds defaults to %q, the profile prices %d", v, defaultProfile().idleReadSeconds)
	}
}
