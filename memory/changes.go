package memory

import (
	"context"
	"maps"
	"slices"
	"time"
)

// Change is one fact a thread's extraction set, as [Store.ThreadChanges]
// lists it: the key, the value set and, when it replaced one, the
// previous value (HadPrevious); At is when it was set. PreviousUnknown
// says it replaced a value that the fact's history no longer holds (the
// record was full, [Config.FitRecord]): its Undo is refused, never a removal.
type Change struct {
	Key             string
	Value           string
	Previous        string
	HadPrevious     bool
	PreviousUnknown bool
	At              time.Time
}

// ThreadChanges returns the facts the thread threadID set after since,
// sorted by key: the facts learned in that thread (its source) updated
// after since, each with the value it replaced when its newest previous
// value was replaced by that thread at that time. One read, no write: a
// gateway asks it after an extraction of the thread to say "Memory
// updated". A fact the thread removed is not listed (it is gone), nor
// one a later thread or the user changed since. Errors: CodeInvalidID; a
// repository failure.
func (s *Store) ThreadChanges(ctx context.Context, sc Scope, threadID string, since time.Time) ([]Change, error) {
	if !ValidID(threadID) {
		return nil, badRequest(CodeInvalidID, "invalid thread ID", "")
	}
	rec, err := s.read(ctx, sc)
	if err != nil {
		return nil, err
	}
	out := []Change{}
	for _, f := range s.facts(rec) {
		if f.Origin != OriginConversation || f.SourceThreadID != threadID || !f.UpdatedAt.After(since) {
			continue
		}
		c := Change{Key: f.Key, Value: f.Value, At: f.UpdatedAt}
		if p, ok := replacedBy(rec.History[f.Key], f); ok {
			c.Previous, c.HadPrevious = p.Value, true
		} else {
			c.PreviousUnknown = f.Replaced
		}
		out = append(out, c)
	}
	return out, nil
}

// replacedBy returns the newest previous value of hist when f's own
// setting replaced it: by f's thread, at f's time.
func replacedBy(hist []PreviousValue, f Fact) (PreviousValue, bool) {
	if len(hist) == 0 || hist[0].ThreadID != f.SourceThreadID || !hist[0].ReplacedAt.Equal(f.UpdatedAt) {
		return PreviousValue{}, false
	}
	return hist[0], true
}

// Undo is what [Store.UndoChange] did: Restored, when the change had
// replaced a value, is that value, set again; Removed says the change
// was a new fact, now removed. Neither: there was nothing of the thread's
// to undo (the fact is not the thread's, or changed since).
type Undo struct {
	Key      string
	Restored string
	Removed  bool
}

// UndoChange undoes the setting of key (any spelling) by the thread
// threadID, the user's "Undo" after "Memory updated": when the fact's
// newest previous value was replaced by that setting, the fact is set back
// as it was ([PreviousValue]: its value, origin, source thread and title,
// evidence, dates and category), and that previous value leaves the
// history; when the thread added the fact, it is removed. A fact whose
// setting replaced a value that its history no longer holds
// ([Fact].Replaced) is never removed: the Undo is refused with
// CodeEarlierValueUnknown and nothing changes. Either way a
// tombstone of the key at now records the user's refusal, so that no
// extraction requested before the undo sets the key again (a redelivered
// message of the same turns is a duplicate by the thread's watermark
// anyway; the tombstone fences also a message of newer turns already in
// flight). A later message sets it as any other. A fact the thread did not
// set, or that changed since, is left as it is. One read and one
// conditional write, merged again on a conflict. Errors: CodeInvalidID,
// CodeInvalidKeyChars, CodeEmptyFact; CodeEarlierValueUnknown;
// CodeConflict; a repository failure.
func (s *Store) UndoChange(ctx context.Context, sc Scope, threadID, key string) (Undo, error) {
	if !ValidID(threadID) {
		return Undo{}, badRequest(CodeInvalidID, "invalid thread ID", "")
	}
	k, _, err := s.checkManual(key, "", false)
	if err != nil {
		return Undo{}, err
	}
	rec, err := s.read(ctx, sc)
	if err != nil {
		return Undo{}, err
	}
	var out Undo
	unknown := false
	err = s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		out, unknown = Undo{Key: k}, false
		now := s.now()
		i := slices.IndexFunc(rec.Facts, func(f Fact) bool { return f.Key == k })
		if i < 0 || rec.Facts[i].Origin != OriginConversation || rec.Facts[i].SourceThreadID != threadID {
			return rec, false
		}
		f := rec.Facts[i]
		p, ok := replacedBy(rec.History[k], f)
		if !ok && f.Replaced {
			unknown = true
			return rec, false
		}
		rec.Facts = slices.Clone(rec.Facts)
		rec.History = maps.Clone(rec.History)
		if ok {
			rec.Facts[i] = p.fact(k, now)
			rec.History[k] = slices.Clone(rec.History[k][1:])
			out.Restored = p.Value
		} else {
			rec.Facts = slices.Delete(rec.Facts, i, i+1)
			delete(rec.History, k)
			out.Removed = true
		}
		rec.Tombstones = maps.Clone(rec.Tombstones)
		if rec.Tombstones == nil {
			rec.Tombstones = map[string]time.Time{}
		}
		rec.Tombstones[k] = now
		return rec, true
	})
	if err != nil {
		return Undo{}, err
	}
	if unknown {
		return Undo{}, &Error{Code: CodeEarlierValueUnknown,
			Message:     "the change replaced a value that is no longer kept; nothing was undone",
			UserMessage: "The earlier value is no longer kept, so this change cannot be undone. You can edit or remove the fact instead."}
	}
	return out, nil
}
