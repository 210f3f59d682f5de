// Package fault makes a local stand-in of an AWS service misbehave as the
// service itself can: stall (requests held, then served late, as by a
// frozen process or a hung connection), throttle, fail with a 500, or
// answer slowly, for a given time or a given number of requests. An
// [Injector] sits in front of the stand-in as an http.Handler; the local
// stack puts one in front of DynamoDB, SQS and the Bedrock Converse
// stand-in, and [Control] serves their control API, which [Client] and
// the command go run ./localtest fault call.
//
// Errors have the shape each service gives them on the wire (see
// [DynamoDB], [SQS], [Bedrock]), so the real SDK clients classify and
// retry them as they would in AWS. docs/localtest.md compares each fault
// with what AWS does.
package fault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Kind is a kind of fault.
type Kind string

// The kinds of fault.
const (
	// Stall holds every request it takes until the fault ends, then
	// serves it: the caller sees no answer, and the request may still be
	// applied after the caller gave up.
	Stall Kind = "stall"
	// Throttle answers the service's throttling error without serving
	// the request.
	Throttle Kind = "throttle"
	// Error answers the service's internal server error (HTTP 500)
	// without serving the request.
	Error Kind = "error"
	// Slow serves each request after Spec.Delay.
	Slow Kind = "slow"
)

// Spec is one fault: its kind, and for how long (For, from when it is
// set) and for how many requests (Requests) it lasts. At least one of the
// two bounds is set; with both, the fault ends at the first reached. A
// stall needs For: it is what ends it. Slow needs Delay.
type Spec struct {
	Kind     Kind
	For      time.Duration
	Requests int
	Delay    time.Duration
}

// Validate returns an error saying what is wrong with s.
func (s Spec) Validate() error {
	switch {
	case s.Kind != Stall && s.Kind != Throttle && s.Kind != Error && s.Kind != Slow:
		return fmt.Errorf("fault: unknown kind %q (stall, throttle, error or slow)", s.Kind)
	case s.For < 0 || s.Requests < 0 || s.Delay < 0:
		return errors.New("fault: durations and counts cannot be negative")
	case s.For == 0 && s.Requests == 0:
		return errors.New("fault: give a duration (10s) or a number of requests (5)")
	case s.Kind == Stall && s.For == 0:
		return errors.New("fault: a stall needs a duration, which is what ends it")
	case s.Kind == Slow && s.Delay == 0:
		return errors.New("fault: slow needs a delay")
	}
	return nil
}

// Injector is an http.Handler that serves requests through next, except
// those a fault takes. It is safe for concurrent use.
type Injector struct {
	svc  Service
	next http.Handler

	mu     sync.Mutex
	cur    *active // nil when no fault is set
	counts Counts
}

// active is the fault being injected.
type active struct {
	spec  Spec
	until time.Time // zero: no time bound
	left  int       // requests left when spec.Requests > 0
	ended chan struct{}
	once  sync.Once
	timer *time.Timer
}

func (a *active) end() {
	a.once.Do(func() {
		close(a.ended)
		if a.timer != nil {
			a.timer.Stop()
		}
	})
}

// Counts are the requests an Injector saw since it was made.
type Counts struct {
	// Passed were served untouched; Faulted were taken by a fault.
	Passed  int64 `json:"passed"`
	Faulted int64 `json:"faulted"`
}

// New returns an Injector for svc in front of next, with no fault set.
func New(svc Service, next http.Handler) *Injector { return &Injector{svc: svc, next: next} }

// Service returns the service the Injector stands in front of.
func (in *Injector) Service() Service { return in.svc }

// Set replaces the current fault, if any, by s from now on; the requests
// a replaced stall holds are served. The error is s's [Spec.Validate].
func (in *Injector) Set(s Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	a := &active{spec: s, left: s.Requests, ended: make(chan struct{})}
	if s.For > 0 {
		a.until = time.Now().Add(s.For)
		a.timer = time.AfterFunc(s.For, func() { in.finish(a) })
	}
	in.replace(a)
	return nil
}

// Clear ends the current fault, if any: held requests are served.
func (in *Injector) Clear() { in.replace(nil) }

// replace makes a (nil for none) the current fault and ends the one it
// replaces, if any, so that the requests it holds are served.
func (in *Injector) replace(a *active) {
	in.mu.Lock()
	old := in.cur
	in.cur = a
	in.mu.Unlock()
	if old != nil {
		old.end()
	}
}

// finish ends a, when it is still the current fault.
func (in *Injector) finish(a *active) {
	in.mu.Lock()
	if in.cur == a {
		in.cur = nil
	}
	in.mu.Unlock()
	a.end()
}

// take returns the fault that takes the next request, or nil.
func (in *Injector) take() *active {
	in.mu.Lock()
	defer in.mu.Unlock()
	a := in.cur
	if a == nil || (!a.until.IsZero() && !time.Now().Before(a.until)) {
		in.counts.Passed++
		return nil
	}
	in.counts.Faulted++
	if a.spec.Requests > 0 {
		if a.left--; a.left == 0 {
			in.cur = nil
			if a.spec.Kind != Stall {
				a.end()
			}
		}
	}
	return a
}

// ServeHTTP serves r through the fault that takes it, if any.
func (in *Injector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := in.take()
	if a == nil {
		in.next.ServeHTTP(w, r)
		return
	}
	switch a.spec.Kind {
	case Throttle:
		in.svc.Throttle.write(w)
		return
	case Error:
		in.svc.Internal.write(w)
		return
	case Stall:
		<-a.ended
	case Slow:
		time.Sleep(a.spec.Delay)
	}
	// The request reached the service: it is served even when its caller
	// has given up meanwhile, as a service that resumes serves what it
	// had received.
	in.next.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
}

// Status is what an Injector is doing.
type Status struct {
	Service string `json:"service"`
	// Fault is the current fault, nil for none; Left is the time it has
	// left (when it has a duration) and RequestsLeft the requests (when
	// it has a count).
	Fault        *SpecJSON `json:"fault,omitempty"`
	Left         string    `json:"left,omitempty"`
	RequestsLeft int       `json:"requestsLeft,omitempty"`
	Counts
}

// Status returns what in is doing now.
func (in *Injector) Status() Status {
	in.mu.Lock()
	defer in.mu.Unlock()
	st := Status{Service: in.svc.Name, Counts: in.counts}
	if a := in.cur; a != nil {
		j := a.spec.json()
		st.Fault = &j
		if !a.until.IsZero() {
			st.Left = time.Until(a.until).Round(100 * time.Millisecond).String()
		}
		if a.spec.Requests > 0 {
			st.RequestsLeft = a.left
		}
	}
	return st
}
