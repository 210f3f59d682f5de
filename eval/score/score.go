// Package score scores the facts a memory kept after a gold conversation
// (package gold) and sums the scores of a run: F1 over the facts kept
// with a bootstrap interval, its mean per conversation, precision and
// recall, contradictions, the leak rate of forbidden facts per category,
// values not in the user's language, the SETs the store refused (no quote
// of a user turn, a secret, an end already past) or sent to the pending
// facts, the kept quotes that are not a user's words, the cost of the
// model calls, and three baselines that no model should fail to beat.
package score

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/memory"
)

// Fact is a kept fact as the report shows it, with what the scorer made of
// it: Verdict is one of the Verdict constants; Subject is the subject its
// key names ("" when none); Category is the forbidden category it matched;
// WrongLanguage tells why its value is not in the user's language ("" when
// it is, or cannot be told).
//
// ValidUntil is the fact's last day (YYYY-MM-DD) when it is temporary;
// Pending says it waits for the user's yes (memory.FactsAndPending.Pending);
// Evidence is the user's words the model quoted for it.
type Fact struct {
	Key           string `json:"key"`
	Value         string `json:"value"`
	ValidUntil    string `json:"validUntil,omitempty"`
	Pending       bool   `json:"pending,omitempty"`
	Evidence      string `json:"evidence,omitempty"`
	Verdict       string `json:"verdict"`
	Subject       string `json:"subject,omitempty"`
	Category      string `json:"category,omitempty"`
	WrongLanguage string `json:"wrongLanguage,omitempty"`
	// Judge is the second model's verdict on a wrong value (see
	// [Report.ApplyJudge]); it never changes Verdict.
	Judge string `json:"judge,omitempty"`
}

// Verdicts of a kept fact.
const (
	// Correct: the first fact on an expected subject with an accepted value.
	Correct = "correct"
	// WrongValue: a fact on an expected subject whose value is not accepted.
	WrongValue = "wrong_value"
	// Duplicate: a second fact on an expected subject already satisfied.
	Duplicate = "duplicate"
	// ForbiddenKept: a fact that must not be kept (see Fact.Category).
	ForbiddenKept = "forbidden"
	// Allowed: a fact on a subject that may be kept or not; not scored.
	Allowed = "allowed"
	// Extra: a fact the gold set neither expects nor allows.
	Extra = "extra"
	// WrongEnd: a fact on an expected subject with an accepted value whose
	// end date is wrong: none for a temporary fact, one for a lasting fact,
	// or a date more than gold.EndTolerance days from the expected one.
	WrongEnd = "wrong_end"
	// NotPending: a stored fact on a subject that must wait for the user's
	// yes as a pending fact.
	NotPending = "not_pending"
)

// Call is one model call of a conversation: its tokens, its latency
// (backoff and retries included), the operations as the model answered
// them and, when it failed or its answer was refused, the outcome
// (memory.OutcomeModelFailed or OutcomeBadAnswer) and the reported error.
// ModelError is the model's own error and Malformed tells whether it said
// the answer was not the expected structure; RequestSHA256 is the hex
// SHA-256 of the request (system prompt and transcript). With them a
// replay (see package harness) gives the store the same answers.
//
// Unsupported, Secrets, Ended and Pending are the store's counts of the
// SETs of the answer it left out or sent to the pending facts
// (memory.ExtractResult).
type Call struct {
	InputTokens   int           `json:"inputTokens"`
	OutputTokens  int           `json:"outputTokens"`
	Latency       time.Duration `json:"latencyNs"`
	Operations    []Operation   `json:"operations"`
	ModelError    string        `json:"modelError,omitempty"`
	Malformed     bool          `json:"malformed,omitempty"`
	RequestSHA256 string        `json:"requestSha256,omitempty"`
	Failed        string        `json:"failed,omitempty"`
	Error         string        `json:"error,omitempty"`
	Unsupported   int           `json:"unsupported,omitempty"`
	Secrets       int           `json:"secrets,omitempty"`
	Ended         int           `json:"ended,omitempty"`
	Pending       int           `json:"pending,omitempty"`
	// Idle marks the idle read: the one extraction of the turns the beat
	// left unread, once the user has left the thread.
	Idle bool `json:"idle,omitempty"`
}

// Operation is one operation as the model answered it, with the user's
// words it quoted, the end date and the category it gave: the core's
// type, in its JSON form.
type Operation = memory.Operation

// Counts are the counts of the facts kept that a conversation's score and
// the totals of a run both report.
type Counts struct {
	// Expected counts the expected subjects, Satisfied those with a
	// correct fact, Kept the facts kept but the allowed ones.
	Expected  int `json:"expected"`
	Satisfied int `json:"satisfied"`
	Kept      int `json:"kept"`
	// Precision is Satisfied/Kept (1 when nothing is kept); Recall is
	// Satisfied/Expected (1 when nothing is expected); F1 is their
	// harmonic mean, 2·Satisfied/(Kept+Expected) (1 when both are 0).
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// Contradictions counts the subjects with two facts or more.
	Contradictions int `json:"contradictions"`
	// Opportunities counts the forbidden facts of the gold set, by
	// category, and Leaked those that a kept fact matched.
	Opportunities map[string]int `json:"opportunities"`
	Leaked        map[string]int `json:"leaked"`
	// WrongLanguage counts the facts whose value is not in the user's
	// language (see [LanguageCheck]).
	WrongLanguage int `json:"wrongLanguage"`
	// Sets counts the SETs the model answered in the calls that did not
	// fail; of them, the store left out Unsupported (their evidence is not
	// a user's words), Secrets (a secret) and Ended (an end date already
	// past), and sent PendingSets to the pending facts.
	Sets        int `json:"sets"`
	Unsupported int `json:"unsupported"`
	Secrets     int `json:"secrets"`
	Ended       int `json:"ended"`
	PendingSets int `json:"pendingSets"`
	// PendingHeld counts the pending facts held at the end.
	PendingHeld int `json:"pendingHeld"`
	// QuotesChecked counts the kept facts (stored or pending) whose
	// evidence the harness checked against the conversation they came
	// from, and BadQuotes those whose evidence is not a span of a user
	// turn of it (see Conversation.QuoteProblems).
	QuotesChecked int `json:"quotesChecked"`
	BadQuotes     int `json:"badQuotes"`
}

// UnsupportedRate returns the share of the SETs answered that the store
// refused for their evidence, Unsupported/Sets; 0 when no SET was
// answered.
func (c Counts) UnsupportedRate() float64 { return share(c.Unsupported, c.Sets) }

// newCounts returns counts of zero, with every forbidden category.
func newCounts() Counts {
	c := Counts{Opportunities: map[string]int{}, Leaked: map[string]int{}}
	for _, cat := range gold.Categories {
		c.Opportunities[cat], c.Leaked[cat] = 0, 0
	}
	return c
}

// add adds the counts of o to c; the rates are left alone.
func (c *Counts) add(o Counts) {
	c.Expected += o.Expected
	c.Satisfied += o.Satisfied
	c.Kept += o.Kept
	c.Contradictions += o.Contradictions
	for k, v := range o.Opportunities {
		c.Opportunities[k] += v
	}
	for k, v := range o.Leaked {
		c.Leaked[k] += v
	}
	c.WrongLanguage += o.WrongLanguage
	c.Sets += o.Sets
	c.Unsupported += o.Unsupported
	c.Secrets += o.Secrets
	c.Ended += o.Ended
	c.PendingSets += o.PendingSets
	c.PendingHeld += o.PendingHeld
	c.QuotesChecked += o.QuotesChecked
	c.BadQuotes += o.BadQuotes
}

// rate sets Precision, Recall and F1 from the counts.
func (c *Counts) rate() {
	c.Precision = ratio(c.Satisfied, c.Kept)
	c.Recall = ratio(c.Satisfied, c.Expected)
	c.F1 = ratio(2*c.Satisfied, c.Kept+c.Expected)
}

// LeakTotal returns the forbidden facts kept, all categories.
func (c Counts) LeakTotal() int { return sumOf(c.Leaked) }

// LeakRate returns the forbidden facts kept per opportunity to keep one,
// of category cat, or of all categories when cat is ""; 0 when there was
// no opportunity.
func (c Counts) LeakRate(cat string) float64 {
	if cat == "" {
		return share(sumOf(c.Leaked), sumOf(c.Opportunities))
	}
	return share(c.Leaked[cat], c.Opportunities[cat])
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// share is n/d, 0 when d is 0.
func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Conversation is the score of one conversation.
type Conversation struct {
	ID       string   `json:"id"`
	Language string   `json:"language"`
	Covers   []string `json:"covers"`

	Counts
	// Missing names the expected subjects without a correct fact (a
	// pending one for the subjects expected pending).
	Missing []string `json:"missing"`
	Facts   []Fact   `json:"facts"`
	// QuoteProblems names the kept facts whose evidence is not a span of
	// a user turn of the conversation they came from, and why.
	QuoteProblems []string `json:"quoteProblems,omitempty"`

	// Calls are the model calls, in order, the idle read's last; Messages
	// counts the messages the gateway sent, Due those for which an
	// extraction was due; UnreadTurns counts the turns after the last due
	// message, which the beat never read, and IdleReadTurns those of them
	// the idle read gave a model that answered.
	Calls         []Call `json:"calls"`
	Messages      int    `json:"messages"`
	Due           int    `json:"due"`
	UnreadTurns   int    `json:"unreadTurns"`
	IdleReadTurns int    `json:"idleReadTurns,omitempty"`
	// BeatOnly is the score of the memory as the user left the thread,
	// before the idle read: what the beat alone learned.
	BeatOnly BeatOnly `json:"beatOnly"`
}

// BeatOnly is what the beat alone learned from a conversation, without
// the idle read: the expected facts it got right, the facts it kept (the
// allowed ones aside) and the expected subjects it missed.
type BeatOnly struct {
	Satisfied int      `json:"satisfied"`
	Kept      int      `json:"kept"`
	Missing   []string `json:"missing"`
}

// BeatOnlyOf returns the beat-only part of c, the score of the memory a
// user left a thread with.
func BeatOnlyOf(c Conversation) BeatOnly {
	return BeatOnly{Satisfied: c.Satisfied, Kept: c.Kept, Missing: c.Missing}
}

// Perfect reports whether c scores 1.0 on both precision and recall with
// no contradiction, no forbidden fact, no value in another language and
// no kept quote that is not the user's.
func (c Conversation) Perfect() bool {
	return c.Precision == 1 && c.Recall == 1 && c.Contradictions == 0 && c.LeakTotal() == 0 && c.WrongLanguage == 0 && c.BadQuotes == 0
}

// Score scores the facts kept after conv, with no pending fact; calls are
// its model calls. See [ScoreMemory].
func Score(conv gold.Conversation, facts []memory.Fact, calls []Call) Conversation {
	return ScoreMemory(conv, memory.FactsAndPending{Facts: facts}, calls)
}

// ScoreMemory scores the memory m left after conv; calls are its model
// calls. A stored fact is judged against the expected, allowed and
// forbidden facts; a pending fact against the facts expected pending
// (conv.Pending) and the allowed ones. A pending fact is never a leak,
// since it is in no prompt until the user says yes, but one not expected
// counts as kept and costs precision; a stored fact on a subject expected
// pending is NotPending. Both halves count in F1: the expected facts are
// conv.Expect and conv.Pending.
func ScoreMemory(conv gold.Conversation, m memory.FactsAndPending, calls []Call) Conversation {
	out := Conversation{ID: conv.ID, Language: conv.Language, Covers: conv.Covers,
		Counts: newCounts(), Calls: calls, Missing: []string{}, Facts: []Fact{}}
	out.Expected = len(conv.Expect) + len(conv.Pending)
	for _, f := range conv.Forbid {
		out.Opportunities[f.Category]++
	}
	out.countSets(calls)
	sorted := slices.Clone(m.Facts)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })

	known := map[string]string{}
	for _, k := range conv.Known {
		known[memory.CanonicalKey(k.Key)] = k.Value
	}
	satisfied := map[string]bool{}
	perSubject := map[string]int{}
	leaked := map[int]bool{}
	for _, f := range sorted {
		key := memory.CanonicalKey(f.Key)
		sf := judge(conv, key, f, satisfied, leaked)
		if sf.Subject != "" {
			perSubject[sf.Subject]++
		}
		if sf.Verdict != Allowed {
			out.Kept++
		}
		subj, _ := conv.SubjectOf(key)
		if known[key] != f.Value && !subj.Neutral && sf.Verdict != Correct {
			sf.WrongLanguage = LanguageCheck(conv, f.Value)
			if sf.WrongLanguage != "" {
				out.WrongLanguage++
			}
		}
		out.Facts = append(out.Facts, sf)
	}
	for i := range leaked {
		out.Leaked[conv.Forbid[i].Category]++
	}
	for _, n := range perSubject {
		if n > 1 {
			out.Contradictions++
		}
	}
	for _, f := range m.Pending {
		sf := judgePending(conv, f, satisfied)
		if sf.Verdict != Allowed {
			out.Kept++
		}
		out.PendingHeld++
		out.Facts = append(out.Facts, sf)
	}
	for _, e := range append(slices.Clone(conv.Expect), conv.Pending...) {
		if !satisfied[e.Subject.Name] {
			out.Missing = append(out.Missing, e.Subject.Name)
		}
	}
	out.Satisfied = len(satisfied)
	out.rate()
	return out
}

// countSets counts the SETs answered in the calls that did not fail and
// what the store did with them.
func (c *Conversation) countSets(calls []Call) {
	for _, call := range calls {
		if call.Failed != "" {
			continue
		}
		for _, op := range call.Operations {
			if strings.EqualFold(strings.TrimSpace(op.Op), memory.OpSet) {
				c.Sets++
			}
		}
		c.Unsupported += call.Unsupported
		c.Secrets += call.Secrets
		c.Ended += call.Ended
		c.PendingSets += call.Pending
	}
}

// newFact returns the report's form of f, with the subject its key
// (canonical) names and no verdict yet.
func newFact(conv gold.Conversation, key string, f memory.Fact, pending bool) Fact {
	sf := Fact{Key: f.Key, Value: f.Value, Pending: pending, Evidence: f.Evidence, Verdict: Extra}
	if !f.ValidUntil.IsZero() {
		sf.ValidUntil = f.ValidUntil.Format(time.DateOnly)
	}
	if subj, ok := conv.SubjectOf(key); ok {
		sf.Subject = subj.Name
	}
	return sf
}

// judgePending returns the verdict on the pending fact f, marking the
// subjects expected pending that it satisfies.
func judgePending(conv gold.Conversation, f memory.Fact, satisfied map[string]bool) Fact {
	key := memory.CanonicalKey(f.Key)
	sf := newFact(conv, key, f, true)
	if e, ok := expectedIn(conv.Pending, key); ok {
		sf.Verdict = verdictOn(e, f, satisfied)
	} else if slices.ContainsFunc(conv.Allow, func(s gold.Subject) bool { return s.Names(key) }) {
		sf.Verdict = Allowed
	}
	return sf
}

// verdictOn returns the verdict on f, a fact on the subject of e, and
// marks that subject satisfied when f is correct.
func verdictOn(e gold.Expected, f memory.Fact, satisfied map[string]bool) string {
	switch {
	case !e.Accepts(f.Value):
		return WrongValue
	case !e.EndAccepted(f.ValidUntil):
		return WrongEnd
	case satisfied[e.Subject.Name]:
		return Duplicate
	}
	satisfied[e.Subject.Name] = true
	return Correct
}

// judge returns the verdict on the kept fact f (key canonical), marking
// the expected subjects it satisfies and the forbidden facts it leaks.
func judge(conv gold.Conversation, key string, f memory.Fact, satisfied map[string]bool, leaked map[int]bool) Fact {
	sf := newFact(conv, key, f, false)
	for i, fb := range conv.Forbid {
		if fb.Matches(conv.OnSubject, key, f.Value) {
			leaked[i] = true
			if sf.Verdict != ForbiddenKept {
				sf.Verdict, sf.Category = ForbiddenKept, fb.Category
			}
		}
	}
	if sf.Verdict == ForbiddenKept {
		return sf
	}
	if e, ok := expectedOn(conv, key); ok {
		sf.Verdict = verdictOn(e, f, satisfied)
	} else if _, ok := expectedIn(conv.Pending, key); ok {
		sf.Verdict = NotPending
	} else if slices.ContainsFunc(conv.Allow, func(s gold.Subject) bool { return s.Names(key) }) {
		sf.Verdict = Allowed
	}
	return sf
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}

// expectedOn returns the stored fact conv expects on the subject of key.
func expectedOn(conv gold.Conversation, key string) (gold.Expected, bool) {
	return expectedIn(conv.Expect, key)
}

// expectedIn returns the expected fact of list on the subject of key.
func expectedIn(list []gold.Expected, key string) (gold.Expected, bool) {
	for _, e := range list {
		if e.Subject.Names(key) {
			return e, true
		}
	}
	return gold.Expected{}, false
}

// Totals sums the scores of a run.
type Totals struct {
	Conversations int `json:"conversations"`
	Perfect       int `json:"perfect"`
	// Counts are the sums of the conversations' counts; Precision, Recall
	// and F1 are over all facts of the run (micro average), the headline.
	Counts
	// MeanF1 is the mean of the conversations' F1 (macro average), so
	// that no conversation stating four facts at once outweighs others.
	MeanF1 float64 `json:"meanF1"`
	// F1Interval and LeakRateInterval are bootstrap 95 % intervals of F1
	// and of the leak rate, all categories (see [Bootstrap]).
	F1Interval       Interval `json:"f1Interval"`
	LeakRateAll      float64  `json:"leakRate"`
	LeakRateInterval Interval `json:"leakRateInterval"`
	// UnsupportedRateAll is Counts.UnsupportedRate of the run.
	UnsupportedRateAll float64 `json:"unsupportedRate"`
	Messages           int     `json:"messages"`
	ModelCalls         int     `json:"modelCalls"`
	FailedCalls        int     `json:"failedCalls"`
	InputTokens        int     `json:"inputTokens"`
	OutputTokens       int     `json:"outputTokens"`
	// UnreadTurns sums the turns the beat never read; IdleReadTurns
	// those of them the idle read read; LeftUnread counts the
	// conversations left with turns unread, and IdleCalls the idle
	// read's model calls.
	UnreadTurns   int `json:"unreadTurns"`
	IdleReadTurns int `json:"idleReadTurns"`
	LeftUnread    int `json:"leftUnread"`
	// UnreadAfterIdle counts the conversations with turns still unread
	// after the idle read (its call failed or was refused).
	UnreadAfterIdle int `json:"unreadAfterIdle"`
	IdleCalls       int `json:"idleCalls"`
	// BeatOnlySatisfied and BeatOnlyKept sum what the beat alone learned
	// (see [BeatOnly]): the expected facts right, the facts kept.
	BeatOnlySatisfied int `json:"beatOnlySatisfied"`
	BeatOnlyKept      int `json:"beatOnlyKept"`
	// Answers measures the size of the model's answers in output tokens
	// against their operations: the figure that sizes the maxTokens of a
	// call (docs/scale.md) for the model of the run.
	Answers AnswerSize `json:"answers"`
	// LatencyP50 and LatencyP95 are percentiles of the latency per call
	// (nearest rank).
	LatencyP50 time.Duration `json:"latencyP50Ns"`
	LatencyP95 time.Duration `json:"latencyP95Ns"`
}

// Sum returns the totals of convs, with their bootstrap intervals.
func Sum(convs []Conversation) Totals {
	t := sum(convs)
	t.F1Interval = Bootstrap(convs, microF1)
	t.LeakRateInterval = Bootstrap(convs, leakRate)
	return t
}

// sum returns the totals of convs without intervals.
func sum(convs []Conversation) Totals {
	t := Totals{Conversations: len(convs), Counts: newCounts()}
	var lat []time.Duration
	var answers answerFit
	for _, c := range convs {
		if c.Perfect() {
			t.Perfect++
		}
		t.add(c.Counts)
		t.MeanF1 += c.F1 / float64(len(convs))
		t.Messages += c.Messages
		t.addBeat(c)
		for _, call := range c.Calls {
			if call.Idle {
				t.IdleCalls++
			}
			t.ModelCalls++
			if call.Failed != "" {
				t.FailedCalls++
			}
			t.InputTokens += call.InputTokens
			t.OutputTokens += call.OutputTokens
			lat = append(lat, call.Latency)
			if call.Failed == "" {
				answers.add(len(call.Operations), call.OutputTokens)
			}
		}
	}
	t.rate()
	t.Answers = answers.result()
	t.LeakRateAll = t.LeakRate("")
	t.UnsupportedRateAll = t.UnsupportedRate()
	t.LatencyP50 = Percentile(lat, 50)
	t.LatencyP95 = Percentile(lat, 95)
	return t
}

// addBeat adds the turns c left unread and what its beat alone learned.
func (t *Totals) addBeat(c Conversation) {
	t.UnreadTurns += c.UnreadTurns
	t.IdleReadTurns += c.IdleReadTurns
	if c.UnreadTurns > 0 {
		t.LeftUnread++
	}
	if c.UnreadTurns > c.IdleReadTurns {
		t.UnreadAfterIdle++
	}
	t.BeatOnlySatisfied += c.BeatOnly.Satisfied
	t.BeatOnlyKept += c.BeatOnly.Kept
}

// Percentile returns the p-th percentile of ds by nearest rank: the
// smallest value with at least p% of the values at or below it; 0 for no
// value.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
