package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/stack"
)

// TestChat drives the chat command through a scripted session on a local
// stack: what the user states in thread 1 is learned by the extractor and
// is in the system prompt of thread 2, which the model answers from; the
// remember tool is refused without approval and runs with it; /forget
// removes a fact from the next thread's prompt; a fact about health waits
// for the user's yes, out of every prompt, until /keep; "Memory updated"
// follows a learned change, and /undo takes it back.
func TestChat(t *testing.T) {
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
	script := strings.Join([]string{
		"Hi, I'm Ana and I live in Lisbon. I have asthma.",
		"/new",
		"What do you know about me?",
		"remember that my role is nurse",
		"n",
		"/facts",
		"remember that my role is nurse",
		"y",
		"/forget home_city",
		"/keep health_condition",
		"/new",
		"/new",
		"I moved to Porto.",
		"/undo",
		"/undo",
		"/new",
		"/quit",
	}, "\n") + "\n"
	var out strings.Builder
	if err := chat(ctx, []string{"-state", state, "-tenant", "acme", "-user", "chat-test"}, strings.NewReader(script), &out); err != nil {
		t.Fatalf("chat: %v\n%s", err, out.String())
	}
	transcript := out.String()
	t.Logf("transcript:\n%s", transcript)

	// Split the transcript at each new thread's banner.
	threads := strings.Split(transcript, "thread chat-")
	if len(threads) != 6 {
		t.Fatalf("got %d thread banners, want 5", len(threads)-1)
	}
	first, second, third := threads[1], threads[2], threads[3]
	if !strings.Contains(first, "no memory yet") {
		t.Errorf("thread 1 started with memory:\n%s", first)
	}
	for _, want := range []string{"learned home_city = Lisbon", "learned name = Ana"} {
		if !strings.Contains(first, want) {
			t.Errorf("thread 1 does not say %q:\n%s", want, first)
		}
	}
	// The fact about health waits, in no prompt until kept.
	if !strings.Contains(first, "waiting for your yes") || !strings.Contains(first, "health_condition = asthma [health], you said “I have asthma”") {
		t.Errorf("thread 1 does not show the pending health fact:\n%s", first)
	}
	if strings.Contains(second[:strings.Index(second, "you> ")], "asthma") {
		t.Errorf("thread 2's prompt holds the pending fact:\n%s", second)
	}
	if !strings.Contains(second, "kept health_condition = asthma") {
		t.Errorf("/keep did not say it kept the fact:\n%s", second)
	}
	// Thread 2's system prompt holds the facts, and the model saw them.
	for _, want := range []string{`<user_memory>`, `"home_city": "Lisbon"`, `"name": "Ana"`, "What I know about you: home city is Lisbon; name is Ana."} {
		if !strings.Contains(second, want) {
			t.Errorf("thread 2 has no %q:\n%s", want, second)
		}
	}
	// Refused without approval, then stored with it.
	const ask = "Allow? [y/N]"
	i1 := strings.Index(second, ask)
	i2 := strings.LastIndex(second, ask)
	if i1 < 0 || i1 == i2 {
		t.Fatalf("the remember tool did not ask for approval twice:\n%s", second)
	}
	refused, approved := second[i1:i2], second[i2:]
	if !strings.Contains(refused, "[tool remember_user_fact refused") || !strings.Contains(refused, "approval") {
		t.Errorf("no refusal after the user said no:\n%s", refused)
	}
	facts, _, _ := strings.Cut(refused[strings.Index(refused, "you> /facts"):], "you> remember")
	if !strings.Contains(facts, "name = Ana") || strings.Contains(facts, "role") {
		t.Errorf("/facts after the refusal, want name and no role:\n%s", facts)
	}
	if !strings.Contains(approved, "[tool remember_user_fact: Remembered role.]") {
		t.Errorf("the approved call did not remember the role:\n%s", approved)
	}
	if !strings.Contains(second, "forgot home_city") {
		t.Errorf("/forget did not say it forgot:\n%s", second)
	}
	// Thread 3: home_city forgotten, the approved role there.
	if strings.Contains(third, "home_city") || !strings.Contains(third, `"role": "nurse"`) || !strings.Contains(third, `"name": "Ana"`) ||
		!strings.Contains(third, `"health_condition": "asthma"`) {
		t.Errorf("thread 3's prompt, want name, role and the kept health fact without home_city:\n%s", third)
	}
	// Thread 4: the home city it learned is undone from the chat ("Memory
	// updated" and /undo; a second /undo has nothing left), and is not in
	// thread 5's prompt.
	fourth, fifth := threads[4], threads[5]
	for _, want := range []string{"Memory updated: home city → Porto · /undo", "undone: forgot home_city = Porto", "nothing to undo\n"} {
		if !strings.Contains(fourth, want) {
			t.Errorf("thread 4 does not say %q:\n%s", want, fourth)
		}
	}
	if strings.Contains(fifth, `"home_city"`) {
		t.Errorf("thread 5's prompt holds the undone home city:\n%s", fifth)
	}
}
