package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
)

// RetryPolicy bounds the retries of the gateway's calls to the memory
// (the read of the facts before a model call, the other reads and the
// send of the extraction message), on top of the AWS SDK's own retries
// within each attempt. Each wait is a random time up to the backoff (full
// jitter), or the Retry-After an answer gave plus up to one BaseDelay.
// A zero field takes the [DefaultRetryPolicy]'s.
type RetryPolicy struct {
	// MaxAttempts is the most attempts of one call, the first included;
	// 1 switches the gateway's retries off.
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt; it doubles
	// each time, up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay is the longest wait between two attempts without a
	// Retry-After.
	MaxDelay time.Duration
	// Total bounds one call, attempts and waits together: a wait that
	// would end past it is not started.
	Total time.Duration
	// AttemptTimeout bounds one attempt.
	AttemptTimeout time.Duration
}

// DefaultRetryPolicy is the policy of a [Config] without one.
var DefaultRetryPolicy = RetryPolicy{
	MaxAttempts:    3,
	BaseDelay:      100 * time.Millisecond,
	MaxDelay:       2 * time.Second,
	Total:          6 * time.Second,
	AttemptTimeout: 3 * time.Second,
}

// DefaultLastKnown is how long the facts last read for a user may stand
// in for a read that failed.
const DefaultLastKnown = 5 * time.Minute

// maxKnown is the most users whose last-read facts one gateway keeps.
const maxKnown = 10000

// withDefaults returns p with each zero field taken from
// [DefaultRetryPolicy].
func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.MaxAttempts > 0 {
		d.MaxAttempts = p.MaxAttempts
	}
	if p.BaseDelay > 0 {
		d.BaseDelay = p.BaseDelay
	}
	if p.MaxDelay > 0 {
		d.MaxDelay = p.MaxDelay
	}
	if p.Total > 0 {
		d.Total = p.Total
	}
	if p.AttemptTimeout > 0 {
		d.AttemptTimeout = p.AttemptTimeout
	}
	return d
}

// MemoryError is what [Config.OnMemoryError] is told: the operation that
// failed for a user ("read" the facts for a prompt, "send" the extraction
// message), its error after the retries, and what the gateway did
// instead: "last-known" (the prompt has the facts last read, within
// Config.LastKnown), "empty" (the prompt has none) or "returned" (Ask
// returns the error with its answer).
type MemoryError struct {
	Scope  memory.Scope
	Op     string
	Err    error
	Served string
}

// retryables and throttles are the AWS SDK's own tests of an error worth
// another attempt.
var (
	retryables = retry.IsErrorRetryables(retry.DefaultRetryables)
	throttles  = retry.IsErrorThrottles(retry.DefaultThrottles)
)

// retryable reports whether err, the error of one attempt, is worth
// another, and the wait its answer asked for (Retry-After), if any: a
// producer timeout, an attempt's own timeout, and what the AWS SDK
// retries (throttling, connection errors, 500, 502, 503, 504; a 429).
// An invalid or too large message is final, and so is a cancellation.
func retryable(err error) (bool, time.Duration) {
	if errors.Is(err, producer.ErrInvalid) || errors.Is(err, producer.ErrTooLarge) || errors.Is(err, context.Canceled) {
		return false, 0
	}
	wait := retryAfter(err)
	if errors.Is(err, producer.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return true, wait
	}
	if retryables.IsErrorRetryable(err) == aws.TrueTernary || throttles.IsErrorThrottle(err) == aws.TrueTernary {
		return true, wait
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusTooManyRequests {
		return true, wait
	}
	return false, 0
}

// retryAfter returns the Retry-After, in seconds, of the HTTP answer in
// err's chain; 0 when there is none.
func retryAfter(err error) time.Duration {
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil {
		return 0
	}
	s, perr := strconv.Atoi(re.Response.Header.Get("Retry-After"))
	if perr != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// do runs attempt until it succeeds, its error is final, the attempts
// run out or the next wait would end past p.Total; it then returns the
// last error. Each attempt has its own deadline (p.AttemptTimeout, within
// the total). A cancellation or deadline of ctx ends it at once with
// ctx's error.
func (p RetryPolicy) do(ctx context.Context, attempt func(context.Context) error) error {
	deadline := time.Now().Add(p.Total)
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, min(p.AttemptTimeout, max(time.Until(deadline), time.Millisecond)))
		err := attempt(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		again, after := retryable(err)
		if !again || n >= p.MaxAttempts {
			return err
		}
		wait := time.Duration(rand.Int64N(int64(min(p.MaxDelay, p.BaseDelay<<(n-1))) + 1))
		if after > 0 {
			wait = after + time.Duration(rand.Int64N(int64(p.BaseDelay)+1))
		}
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// knownFacts keeps the facts last read for each user, for a read that
// fails within their lifetime.
type knownFacts struct {
	mu      sync.Mutex
	entries map[memory.Scope]knownEntry
}

type knownEntry struct {
	facts []memory.Fact
	at    time.Time
}

// put keeps facts as sc's last read.
func (k *knownFacts) put(sc memory.Scope, facts []memory.Fact) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.entries == nil {
		k.entries = map[memory.Scope]knownEntry{}
	}
	if _, ok := k.entries[sc]; !ok && len(k.entries) >= maxKnown {
		for old := range k.entries { // any one: a bound, not an order
			delete(k.entries, old)
			break
		}
	}
	k.entries[sc] = knownEntry{facts: append([]memory.Fact(nil), facts...), at: time.Now()}
}

// get returns sc's last-read facts when they were read within life.
func (k *knownFacts) get(sc memory.Scope, life time.Duration) ([]memory.Fact, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.entries[sc]
	if !ok || time.Since(e.at) > life {
		return nil, false
	}
	return append([]memory.Fact(nil), e.facts...), true
}

// drop forgets sc's last-read facts: a write made them stale.
func (k *knownFacts) drop(sc memory.Scope) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.entries, sc)
}

// readFacts reads the user's facts for a prompt, retried by the policy.
// When the read still fails, it answers with the facts last read within
// Config.LastKnown, or none, and reports the error to OnMemoryError; with
// Config.StrictMemory, or when ctx ended, it returns the error.
func (g *Gateway) readFacts(ctx context.Context, sc memory.Scope) ([]memory.Fact, error) {
	var facts []memory.Fact
	err := g.retry.do(ctx, func(ctx context.Context) error {
		var err error
		facts, err = g.cfg.Store.GetFacts(ctx, sc)
		return err
	})
	if err == nil {
		g.known.put(sc, facts)
		return facts, nil
	}
	if g.cfg.StrictMemory || ctx.Err() != nil {
		return nil, err
	}
	facts, ok := g.known.get(sc, g.cfg.LastKnown)
	served := "empty"
	if ok {
		served = "last-known"
	}
	g.report(ctx, MemoryError{Scope: sc, Op: "read", Err: err, Served: served})
	return facts, nil
}

// report tells Config.OnMemoryError, or the default logger, of e.
func (g *Gateway) report(ctx context.Context, e MemoryError) {
	if g.cfg.OnMemoryError != nil {
		g.cfg.OnMemoryError(ctx, e)
		return
	}
	slog.Default().WarnContext(ctx, "gateway: the memory failed", "op", e.Op, "served", e.Served,
		"code", memory.ErrorCode(e.Err), "err", e.Err)
}
