package memory_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestTurnsDigest holds TurnsDigest to its construction, written out here
// byte by byte, and to its properties: no digest without turns, a change of
// role, text or order is another digest, and a split of one text over two
// turns is too (the lengths are in the sum).
func TestTurnsDigest(t *testing.T) {
	turns := []memory.Turn{{Role: "user", Text: "I'm Ana, é 😀"}, {Role: "assistant", Text: ""}}
	sum := sha256.Sum256([]byte("user\x0016\x00I'm Ana, é 😀\x00assistant\x000\x00\x00"))
	if got, want := memory.TurnsDigest(turns), "#"+base64.RawURLEncoding.EncodeToString(sum[:9]); got != want {
		t.Errorf("TurnsDigest = %q, want %q", got, want)
	}
	if got := memory.TurnsDigest(nil); got != "" {
		t.Errorf("TurnsDigest(nil) = %q, want none", got)
	}
	d := memory.TurnsDigest(turns)
	if len(d) != memory.TurnsDigestLen || !memory.IsTurnsDigest(d) {
		t.Errorf("%q: length %d, IsTurnsDigest %v", d, len(d), memory.IsTurnsDigest(d))
	}
	for name, other := range map[string][]memory.Turn{
		"role":  {{Role: "tool", Text: "I'm Ana, é 😀"}, {Role: "assistant", Text: ""}},
		"text":  {{Role: "user", Text: "I'm Ana, é 😀!"}, {Role: "assistant", Text: ""}},
		"order": {{Role: "assistant", Text: ""}, {Role: "user", Text: "I'm Ana, é 😀"}},
		"split": {{Role: "user", Text: "ab"}, {Role: "user", Text: "c"}},
		"fewer": turns[:1],
	} {
		if memory.TurnsDigest(other) == d {
			t.Errorf("another %s, the same digest", name)
		}
	}
	if memory.TurnsDigest([]memory.Turn{{Role: "user", Text: "ab"}, {Role: "user", Text: "c"}}) ==
		memory.TurnsDigest([]memory.Turn{{Role: "user", Text: "a"}, {Role: "user", Text: "bc"}}) {
		t.Error("a text split otherwise gives the same digest")
	}
	for _, s := range []string{"", "#", "12", "#AAAAAAAAAAA", "#AAAAAAAAAAAAA", "AAAAAAAAAAAAA", "#AAAAAAAAAAA=", "#AAAAAAAAAAA+"} {
		if memory.IsTurnsDigest(s) {
			t.Errorf("IsTurnsDigest(%q) = true", s)
		}
	}
}

// uncounted returns an uncounted request of the turns texts.
func uncounted(thread string, texts ...string) memory.ExtractRequest {
	req := extractReq(memorytest.Ana, thread, 0, 0, texts...)
	req.Uncounted = true
	return req
}

// TestExtractUncounted runs sequences of requests on one user and holds
// each request's outcome, the model calls and the thread's watermark: an
// uncounted request is a duplicate only of the same turns last extracted
// on its thread; a count and a digest never cover each other.
func TestExtractUncounted(t *testing.T) {
	type step struct {
		req  memory.ExtractRequest
		want memory.Outcome
	}
	changed, unchanged, dup := memory.OutcomeChanged, memory.OutcomeUnchanged, memory.OutcomeDuplicate
	a, b := uncounted("th-1", "I'm Ana", "Hi Ana"), uncounted("th-1", "I live in Porto", "Noted")
	withContext := a
	withContext.ContextTurns = []memory.Turn{{Role: memory.RoleUser, Text: "earlier"}}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"the same turns twice: one model call", []step{{a, changed}, {a, dup}}},
		{"context turns are not in the digest", []step{{a, changed}, {withContext, dup}}},
		{"new turns, then the older turns again: read again", []step{{a, changed}, {b, unchanged}, {a, unchanged}, {a, dup}}},
		{"another thread is its own watermark", []step{{a, changed}, {uncounted("th-2", "I'm Ana", "Hi Ana"), unchanged}}},
		{"a counted request after an uncounted one", []step{{a, changed}, {extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana", "Hi Ana"), unchanged},
			{extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana", "Hi Ana"), dup}}},
		{"an uncounted request after a counted one", []step{{extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana", "Hi Ana"), changed}, {a, unchanged}, {a, dup},
			{extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana", "Hi Ana"), unchanged}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
			s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
			calls := 0
			for i, st := range c.steps {
				before, _ := repo.Record(memorytest.Ana)
				res, err := s.Extract(ctx, st.req)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if st.want != dup {
					calls++
				}
				after, _ := repo.Record(memorytest.Ana)
				if res.Outcome != st.want || model.Calls() != calls || (st.want == dup) != (after.Version == before.Version) {
					t.Fatalf("step %d: outcome %q, model calls %d, wrote %v; want %q, %d calls", i, res.Outcome, model.Calls(), after.Version != before.Version, st.want, calls)
				}
				m := after.Threads[memory.ThreadKey(st.req.ThreadID)]
				want := memory.ThreadMark{TurnCount: st.req.TurnCount}
				if st.req.Uncounted {
					want = memory.ThreadMark{Digest: memory.TurnsDigest(st.req.Turns)}
				}
				if m.TurnCount != want.TurnCount || m.Digest != want.Digest || m.At.IsZero() {
					t.Errorf("step %d: watermark %+v, want %+v", i, m, want)
				}
			}
		})
	}
}

// TestExtractUncountedRefusesCounts: an uncounted request with a count is
// a 400 with CodeInvalidTurnCount, and no turn is no_turns, as counted.
func TestExtractUncountedRefusesCounts(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel()
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	bad := uncounted("th-1", "hi")
	bad.TurnCount = 2
	if _, err := s.Extract(ctx, bad); memory.ErrorCode(err) != memory.CodeInvalidTurnCount {
		t.Errorf("uncounted with a count: %v, want CodeInvalidTurnCount", err)
	}
	if res, err := s.Extract(ctx, uncounted("th-1")); err != nil || res.Outcome != memory.OutcomeNoTurns || model.Calls() != 0 {
		t.Errorf("no turns: %+v, %v", res, err)
	}
}
