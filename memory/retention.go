package memory

import (
	"context"
	"time"
)

// Retention is how long copies of a user's data outlive the stored record:
// the stack's settings, passed to the erasure function.
type Retention struct {
	// Backups is the table's point-in-time recovery period: a restore can
	// bring back the record as it was up to this long before now.
	Backups time.Duration
	// Queue is the extraction queue's message retention.
	Queue time.Duration
	// DeadLetterQueue is the dead-letter queue's message retention. For a
	// FIFO queue it starts again when a message moves there, so a message
	// can live Queue plus DeadLetterQueue after it was sent.
	DeadLetterQueue time.Duration
}

// MessageLife is the longest an extraction message can live after it was
// sent: its retention in the queue, then, restarted, in the dead-letter
// queue.
func (r Retention) MessageLife() time.Duration { return r.Queue + r.DeadLetterQueue }

// Erasure is what an erasure did and what remains after it.
type Erasure struct {
	// RemovedFacts is the number of facts the erasure removed.
	RemovedFacts int
	// At is the time of the erasure, the fence's time.
	At time.Time
	// BackupsUntil is when the last point-in-time backup that holds the
	// record as it was before the erasure leaves the recovery window.
	BackupsUntil time.Time
	// MessagesUntil is when the last extraction message sent before the
	// erasure has expired from the queue and the dead-letter queue. Such
	// a message writes nothing (the fence), but it holds the user's turns.
	MessagesUntil time.Time
}

// Erase is [Store.DeleteByUser] that also says, from r, until when backups
// and queued messages may still hold the user's data. Errors: those of
// DeleteByUser.
func (s *Store) Erase(ctx context.Context, sc Scope, r Retention) (Erasure, error) {
	n, at, err := s.deleteByUser(ctx, sc)
	if err != nil {
		return Erasure{}, err
	}
	return Erasure{RemovedFacts: n, At: at, BackupsUntil: at.Add(r.Backups), MessagesUntil: at.Add(r.MessageLife())}, nil
}
