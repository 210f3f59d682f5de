package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/memory"
)

// ErrNotReplayable is wrapped by [Replayer.Err] when the recorded calls
// do not fit the conversation any more: a request differs from the one
// recorded (the turns, the known facts, the template or the model ID
// changed), or the store asks for more calls than were recorded, or
// fewer.
var ErrNotReplayable = errors.New("harness: the recorded calls do not fit the conversation")

// Replayer is a memory.Model that gives the answers recorded in a report,
// in order, and calls no model: the same operations, tokens, latency and
// errors, so that a run is paid for once and scored again as the scorer
// and the gold set improve.
type Replayer struct {
	mu      sync.Mutex
	calls   []score.Call
	next    int
	latency time.Duration
	err     error
}

// NewReplayer returns a Replayer of the calls recorded for one
// conversation.
func NewReplayer(calls []score.Call) *Replayer { return &Replayer{calls: calls} }

// Extract implements memory.Model. A request that is not the one recorded
// gets an error, and [Replayer.Err] tells of it.
func (r *Replayer) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next >= len(r.calls) {
		r.fail(fmt.Errorf("%w: call %d was not recorded", ErrNotReplayable, r.next+1))
		return memory.ModelAnswer{}, r.err
	}
	c := r.calls[r.next]
	r.next++
	if c.RequestSHA256 == "" {
		r.fail(fmt.Errorf("%w: call %d recorded no request (a report older than -replay)", ErrNotReplayable, r.next))
		return memory.ModelAnswer{}, r.err
	}
	if sum := RequestSHA256(req); c.RequestSHA256 != sum {
		r.fail(fmt.Errorf("%w: the request of call %d differs from the one recorded", ErrNotReplayable, r.next))
		return memory.ModelAnswer{}, r.err
	}
	ans := memory.ModelAnswer{Usage: memory.Usage{InputTokens: c.InputTokens, OutputTokens: c.OutputTokens}}
	ans.Operations = append(ans.Operations, c.Operations...)
	r.latency = c.Latency
	if c.ModelError != "" {
		return ans, recordedError{msg: c.ModelError, malformed: c.Malformed}
	}
	return ans, nil
}

// lastLatency is the recorded latency of the last call, which the
// harness reports instead of the replay's own.
func (r *Replayer) lastLatency() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.latency
}

func (r *Replayer) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Err returns the first misfit of the replay (wrapping ErrNotReplayable),
// a call recorded and never asked for included, or nil.
func (r *Replayer) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil && r.next < len(r.calls) {
		return fmt.Errorf("%w: %d calls recorded, %d asked for", ErrNotReplayable, len(r.calls), r.next)
	}
	return r.err
}

// recordedError is a model error as a report recorded it.
type recordedError struct {
	msg       string
	malformed bool
}

func (e recordedError) Error() string { return e.msg }

// Is makes a recorded malformed answer one again for the store.
func (e recordedError) Is(target error) bool {
	return e.malformed && target == memory.ErrMalformedAnswer
}
