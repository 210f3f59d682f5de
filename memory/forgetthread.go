package memory

import (
	"context"
	"maps"
	"time"
)

// ThreadForgetting is what [Store.ForgetThread] forgot.
type ThreadForgetting struct {
	// ThreadID is the thread whose facts were forgotten.
	ThreadID string
	// Facts are the facts it forgot, sorted by key, as they were stored.
	Facts []Fact
	// Pending are the pending facts it discarded, sorted by key.
	Pending []Fact
	// At is the thread's forget fence: an extraction of the thread
	// requested at or before it writes nothing.
	At time.Time
}

// ForgetThread forgets what the thread threadID taught the user: every
// fact whose SourceThreadID is the thread and whose Origin is
// OriginConversation, and every pending fact from it. An import's ID
// works as a thread's: its facts (OriginImported) are forgotten the same
// way. A fact set by hand
// or by a tool stays, and so does one that another thread confirmed
// later: a fact's source is the thread of its last setting or
// confirmation ([confirms]). The thread's watermark gets a forget fence
// (ThreadMark.ForgottenAt, now), so that no extraction of the thread
// requested at or before now, nor its idle read, brings any of it back;
// its unread tail goes. The fence is written even when nothing is
// forgotten (an extraction in flight may be about to set a fact), also
// for a user without a record. One read and one conditional write,
// merged again on a conflict. Errors: *Error with CodeInvalidID;
// CodeConflict; a repository failure.
func (s *Store) ForgetThread(ctx context.Context, sc Scope, threadID string) (ThreadForgetting, error) {
	if err := sc.Validate(); err != nil {
		return ThreadForgetting{}, err
	}
	if !ValidID(threadID) {
		return ThreadForgetting{}, badRequest(CodeInvalidID, "invalid thread ID", "")
	}
	rec, err := s.repo.Get(ctx, sc)
	if err != nil {
		return ThreadForgetting{}, repoError(err)
	}
	at := s.now()
	out := ThreadForgetting{ThreadID: threadID, At: at}
	key := ThreadKey(threadID)
	err = s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		now := s.now()
		taught := func(f Fact) bool {
			return f.Origin.Learned() && f.SourceThreadID == threadID
		}
		out.Facts = filterFacts(s.liveFacts(rec.Facts, false, now), taught)
		out.Pending = filterFacts(s.liveFacts(rec.Pending, true, now), taught)
		rec.Facts = filterFacts(rec.Facts, func(f Fact) bool { return !taught(f) })
		rec.Pending = filterFacts(rec.Pending, func(f Fact) bool { return !taught(f) })
		rec.History = withoutThreadHistory(rec.History, threadID)
		m, ok := rec.Threads[key]
		if !ok {
			m = ThreadMark{At: at}
		}
		m.ForgottenAt = at
		var folded time.Time
		rec.Threads, folded = markThread(rec.Threads, key, m, s.cfg.MaxThreads)
		if folded.After(rec.ClearedAt) {
			rec.ClearedAt = folded
		}
		if _, ok := rec.Tails[key]; ok {
			rec.Tails = maps.Clone(rec.Tails)
			delete(rec.Tails, key)
		}
		return rec, true
	})
	if err != nil {
		return ThreadForgetting{}, err
	}
	return out, nil
}

// filterFacts returns the facts of facts that keep says to keep, in order,
// never nil.
func filterFacts(facts []Fact, keep func(Fact) bool) []Fact {
	out := make([]Fact, 0, len(facts))
	for _, f := range facts {
		if keep(f) {
			out = append(out, f)
		}
	}
	return out
}

// withoutExpiredForgets returns threads with every forget fence that
// expired says is past zeroed (a copy when one is); the watermarks stay.
func withoutExpiredForgets(threads map[string]ThreadMark, expired func(time.Time) bool) map[string]ThreadMark {
	var out map[string]ThreadMark
	for k, m := range threads {
		if m.ForgottenAt.IsZero() || !expired(m.ForgottenAt) {
			continue
		}
		if out == nil {
			out = maps.Clone(threads)
		}
		m.ForgottenAt = time.Time{}
		out[k] = m
	}
	if out == nil {
		return threads
	}
	return out
}
