package gold_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/gold/goldtest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestGoldSetMix holds the gold set to the mix of real chats: 120
// conversations or more; half or more of natural length with the fact
// stated in the middle; facts updated twice within one extraction window
// and across windows; one user over three threads, checked after each;
// 15 expected subjects; the traps; the requests; 10 languages with a
// right-to-left script, Hindi and code-switching.
func TestGoldSetMix(t *testing.T) {
	convs := load(t)
	if len(convs) < 120 {
		t.Errorf("%d conversations, want at least 120", len(convs))
	}
	good := 0
	for _, c := range convs {
		if gold.LikeRealChat(c) {
			good++
		}
	}
	if 2*good < len(convs) {
		t.Errorf("%d of %d conversations of natural length with the fact in the middle, want half or more", good, len(convs))
	}
	tags, subjects, langs := map[string]int{}, map[string]bool{}, map[string]bool{}
	for _, c := range convs {
		for _, tag := range c.Covers {
			tags[tag]++
		}
		for _, e := range c.Expect {
			subjects[e.Subject.Name] = true
		}
		langs[c.Language] = true
	}
	for _, tag := range []string{"updated_twice_window", "updated_twice_across", "hypothetical", "fiction", "quoted",
		"shared_account", "sarcasm", "qualified", "email_kept", "forget_everything", "code_switching", "rtl"} {
		if tags[tag] < 2 {
			t.Errorf("covers %q: %d conversations, want at least 2", tag, tags[tag])
		}
	}
	if len(subjects) < 15 {
		t.Errorf("%d expected subjects, want at least 15", len(subjects))
	}
	if len(langs) < 10 || !langs["hi"] || !(langs["ar"] || langs["he"]) {
		t.Errorf("languages %v: want at least 10, with Hindi and a right-to-left script", langs)
	}
	checkThreads(t, convs)
	checkUpdatesTwice(t, convs)
}

// checkThreads checks that one user at least has three threads, each
// with facts expected after it, and that a later thread keeps expecting
// what an earlier one established (facts carried over).
func checkThreads(t *testing.T, convs []gold.Conversation) {
	t.Helper()
	groups, err := gold.Threads(convs)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range groups {
		if len(g) < 3 {
			continue
		}
		found = true
		first := convs[g[0]]
		for _, i := range g[1:] {
			c := convs[i]
			if len(c.Known) > 0 {
				t.Errorf("%s continues a thread but sets known facts: they must come from the earlier threads", c.ID)
			}
			carried := 0
			for _, e := range first.Expect {
				if slices.ContainsFunc(c.Expect, func(x gold.Expected) bool { return x.Subject.Name == e.Subject.Name }) {
					carried++
				}
			}
			if len(c.Expect) == 0 || carried == 0 {
				t.Errorf("%s: a later thread must check facts after it, some carried over from %s", c.ID, first.ID)
			}
		}
	}
	if !found {
		t.Error("no user with three threads or more")
	}
}

// checkUpdatesTwice checks the conversations that update a fact twice:
// within one window, their user turns after the last-but-one due message
// hold both updates (no extraction between them); across windows, the
// model is called three times or more.
func checkUpdatesTwice(t *testing.T, convs []gold.Conversation) {
	t.Helper()
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		due := len(goldtest.DueCounts(store, c))
		if slices.Contains(c.Covers, "updated_twice_across") && due < 3 {
			t.Errorf("%s updates a fact across windows but is read in %d extractions, want 3 or more", c.ID, due)
		}
		if slices.Contains(c.Covers, "updated_twice_window") && len(c.Forbid) == 0 {
			t.Errorf("%s updates a fact twice within a window: forbid the values it replaced", c.ID)
		}
	}
}

// TestNoInjectionHidesInAToolTurn keeps the injection cases meaningful:
// tool turns never reach the model (see the README), so an injected
// value that only a tool turn holds tests nothing.
func TestNoInjectionHidesInAToolTurn(t *testing.T) {
	for _, c := range load(t) {
		var users, tools strings.Builder
		for _, tt := range c.Turns {
			switch tt.Role {
			case memory.RoleUser:
				users.WriteString(strings.ToLower(tt.Text))
			case memory.RoleTool:
				tools.WriteString(strings.ToLower(tt.Text))
			}
		}
		for _, f := range c.Forbid {
			if f.Category != gold.Injected {
				continue
			}
			for _, v := range f.Values {
				v = strings.ToLower(v)
				if strings.Contains(tools.String(), v) && !strings.Contains(users.String(), v) {
					t.Errorf("%s: the injected %q is only in a tool turn, which the model never reads", c.ID, v)
				}
			}
		}
	}
}
