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

// DeleteByUser is the GDPR erasure: the user's record goes, facts,
// watermarks and all. A fence that holds only the erasure time stays
// behind until it expires, so that an extraction requested before the
// erasure writes nothing afterwards ([Repository.Erase] replaces the
// record by the fence). It returns the number of facts removed, the
// erasure's time and, from r (the zero Retention for none), until when
// backups and queued messages may still hold the user's data.
// Errors: CodeInvalidID; a repository failure.
func (s *Store) DeleteByUser(ctx context.Context, sc Scope, r Retention) (Erasure, error) {
	if err := sc.Validate(); err != nil {
		return Erasure{}, err
	}
	at := s.now()
	n, err := s.repo.Erase(ctx, sc, at)
	if err != nil {
		return Erasure{}, repoError(err)
	}
	return Erasure{RemovedFacts: n, At: at, BackupsUntil: at.Add(r.Backups), MessagesUntil: at.Add(r.MessageLife())}, nil
}
