// Package memorytest provides an in-memory [memory.Repository] with the
// same conditional semantics as the DynamoDB one, for the core's table
// tests and the handlers' tests, a scripted [memory.Model], a stepping
// [memory.Clock] and the standard users [Ana], [Bob] and [OtherAna]. Both
// repositories pass the contract suite of memory/repotest.
package memorytest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// The standard users of the tests of the core and the functions. Ana and
// Bob share the tenant acme; OtherAna has Ana's user ID in the tenant
// globex, so that a test sees the tenant keep users apart.
var (
	// Ana is user u-123 of tenant acme.
	Ana = memory.Scope{TenantID: "acme", UserID: "u-123"}
	// Bob is user u-456 of tenant acme.
	Bob = memory.Scope{TenantID: "acme", UserID: "u-456"}
	// OtherAna is user u-123 of tenant globex: Ana's user ID, another
	// tenant.
	OtherAna = memory.Scope{TenantID: "globex", UserID: "u-123"}
)

// Repo is an in-memory repository. It counts calls by method, and Fail, when
// set, makes every call fail with it. Safe for concurrent use.
type Repo struct {
	mu      sync.Mutex
	records map[memory.Scope]memory.Record
	seq     int
	calls   map[string]int

	// Fail, when non-nil, is returned by every call.
	Fail error
	// BeforeSave, when set, runs inside Save before the version check, to
	// let a test write concurrently.
	BeforeSave func()
}

// NewRepo returns an empty Repo.
func NewRepo() *Repo {
	return &Repo{records: map[memory.Scope]memory.Record{}, calls: map[string]int{}}
}

// Calls returns how often the method name was called.
func (r *Repo) Calls(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

// Record returns a deep copy of the stored record of s and whether one is
// stored (a fence counts).
func (r *Repo) Record(s memory.Scope) (memory.Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.records[s]
	return clone(rec), ok
}

// Put stores rec for s as is, with a new version, bypassing every check.
func (r *Repo) Put(s memory.Scope, rec memory.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec = clone(rec)
	rec.Version = r.nextVersion()
	r.records[s] = rec
}

func (r *Repo) begin(name string) error {
	r.calls[name]++
	return r.Fail
}

func (r *Repo) nextVersion() string {
	r.seq++
	return strconv.Itoa(r.seq)
}

func clone(rec memory.Record) memory.Record {
	if rec.Facts != nil {
		rec.Facts = slices.Clone(rec.Facts)
	}
	if rec.Threads != nil {
		rec.Threads = maps.Clone(rec.Threads)
	}
	if rec.Tombstones != nil {
		rec.Tombstones = maps.Clone(rec.Tombstones)
	}
	if rec.Pending != nil {
		rec.Pending = slices.Clone(rec.Pending)
	}
	if len(rec.Tails) == 0 {
		rec.Tails = nil // stored as no tails, as dynamorepo stores none
	} else {
		rec.Tails = maps.Clone(rec.Tails)
	}
	rec.History = cloneHistory(rec.History, rec.Facts)
	if len(rec.Imports) == 0 {
		rec.Imports = nil // stored as none, as dynamorepo stores none
	} else {
		rec.Imports = slices.Clone(rec.Imports)
	}
	if len(rec.Declined) == 0 {
		rec.Declined = nil
	} else {
		rec.Declined = maps.Clone(rec.Declined)
	}
	return rec
}

// cloneHistory returns a deep copy of the histories of the facts held
// (as dynamorepo stores a history inside its fact), nil when none is left.
func cloneHistory(hist map[string][]memory.PreviousValue, facts []memory.Fact) map[string][]memory.PreviousValue {
	var out map[string][]memory.PreviousValue
	for _, f := range facts {
		if h := hist[f.Key]; len(h) > 0 {
			if out == nil {
				out = map[string][]memory.PreviousValue{}
			}
			out[f.Key] = slices.Clone(h)
		}
	}
	return out
}

// ended reports whether rec holds something that ended by at (its Expires
// is set and not after at): SetFact and DeleteFact then leave the write to
// Save.
func ended(rec memory.Record, at time.Time) bool {
	return !rec.Expires.IsZero() && !rec.Expires.After(at)
}

// Get implements memory.Repository.
func (r *Repo) Get(_ context.Context, s memory.Scope) (memory.Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin("Get"); err != nil {
		return memory.Record{}, err
	}
	return clone(r.records[s]), nil
}

// SetFact implements memory.Repository. A record stored by Put with facts
// but without a tombstone map is refused, as the DynamoDB repository
// refuses an item without one.
func (r *Repo) SetFact(_ context.Context, s memory.Scope, f memory.Fact, maxFacts int) (bool, memory.Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin("SetFact"); err != nil {
		return false, memory.Record{}, err
	}
	rec, ok := r.records[s]
	if !ok || rec.Facts == nil {
		// No facts yet (no record, or a fence): create them with f alone.
		rec = clone(rec)
		rec.Facts = []memory.Fact{f}
		if rec.Tombstones == nil {
			rec.Tombstones = map[string]time.Time{}
		}
		rec.Version = r.nextVersion()
		r.records[s] = rec
		return true, memory.Record{}, nil
	}
	if rec.Tombstones == nil || ended(rec, f.UpdatedAt) {
		// Stored by Put without a tombstone map: refused, as the DynamoDB
		// repository refuses such an item; or something ended, which a
		// whole-record write removes.
		return false, clone(rec), nil
	}
	idx := -1
	for i, x := range rec.Facts {
		if x.Key == f.Key {
			idx = i
		}
	}
	if idx < 0 && len(rec.Facts) >= maxFacts {
		return false, clone(rec), nil
	}
	rec = clone(rec)
	if idx >= 0 {
		rec.Facts[idx] = f
	} else {
		rec.Facts = append(rec.Facts, f)
	}
	delete(rec.Tombstones, f.Key)
	delete(rec.History, f.Key)
	rec.Pending = slices.DeleteFunc(rec.Pending, func(p memory.Fact) bool { return p.Key == f.Key })
	rec.Version = r.nextVersion()
	r.records[s] = rec
	return true, memory.Record{}, nil
}

// DeleteFact implements memory.Repository. A record stored by Put without
// a tombstone map is refused, like in SetFact.
func (r *Repo) DeleteFact(_ context.Context, s memory.Scope, key string, at time.Time, maxTombstones int) (bool, memory.Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin("DeleteFact"); err != nil {
		return false, memory.Record{}, err
	}
	rec, ok := r.records[s]
	if !ok || rec.Facts == nil || rec.Tombstones == nil || ended(rec, at) {
		return false, clone(rec), nil
	}
	if _, had := rec.Tombstones[key]; !had && len(rec.Tombstones) >= maxTombstones {
		return false, clone(rec), nil
	}
	rec = clone(rec)
	rec.Facts = slices.DeleteFunc(rec.Facts, func(f memory.Fact) bool { return f.Key == key })
	rec.Pending = slices.DeleteFunc(rec.Pending, func(f memory.Fact) bool { return f.Key == key })
	rec.Tombstones[key] = at
	delete(rec.History, key)
	rec.Version = r.nextVersion()
	r.records[s] = rec
	return true, memory.Record{}, nil
}

// ClearFacts implements memory.Repository.
func (r *Repo) ClearFacts(_ context.Context, s memory.Scope, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin("ClearFacts"); err != nil {
		return err
	}
	rec := clone(r.records[s])
	rec.Facts = []memory.Fact{}
	rec.Tombstones = map[string]time.Time{}
	rec.Pending = nil
	rec.Tails = nil
	rec.History = nil
	rec.Imports = nil
	rec.Declined = nil
	rec.Expires = time.Time{}
	rec.ClearedAt = at
	rec.Version = r.nextVersion()
	r.records[s] = rec
	return nil
}

// Erase implements memory.Repository: the record is replaced by a fence
// that holds only the erasure time.
func (r *Repo) Erase(_ context.Context, s memory.Scope, at time.Time) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin("Erase"); err != nil {
		return 0, err
	}
	n := len(r.records[s].Facts)
	r.records[s] = memory.Record{ErasedAt: at, Version: r.nextVersion()}
	return n, nil
}

// Save implements memory.Repository.
func (r *Repo) Save(_ context.Context, s memory.Scope, rec memory.Record) (string, memory.Record, error) {
	r.mu.Lock()
	before := r.BeforeSave
	r.mu.Unlock()
	if before != nil {
		before()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin("Save"); err != nil {
		return "", memory.Record{}, err
	}
	cur := r.records[s]
	if cur.Version != rec.Version {
		return "", clone(cur), memory.ErrConflict
	}
	rec = clone(rec)
	if rec.Facts == nil {
		rec.Facts = []memory.Fact{}
	}
	if rec.Tombstones == nil {
		rec.Tombstones = map[string]time.Time{}
	}
	rec.ErasedAt = cur.ErasedAt
	rec.Version = r.nextVersion()
	r.records[s] = rec
	return rec.Version, memory.Record{}, nil
}

// Model is a scripted model: each call pops the next answer; with none left
// it answers no operation. It counts calls and keeps the requests.
type Model struct {
	mu       sync.Mutex
	answers  []Answer
	requests []memory.ModelRequest
}

// Answer is one scripted answer of a Model.
type Answer struct {
	Operations []memory.Operation
	Usage      memory.Usage
	Err        error
}

// NewModel returns a Model that gives answers in order.
func NewModel(answers ...Answer) *Model { return &Model{answers: answers} }

// Push appends answers.
func (m *Model) Push(answers ...Answer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers = append(m.answers, answers...)
}

// Calls returns the number of calls made.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Requests returns the requests received, in order.
func (m *Model) Requests() []memory.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]memory.ModelRequest(nil), m.requests...)
}

// Extract implements memory.Model.
func (m *Model) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	if err := ctx.Err(); err != nil {
		return memory.ModelAnswer{}, err
	}
	if len(m.answers) == 0 {
		return memory.ModelAnswer{}, nil
	}
	a := m.answers[0]
	m.answers = m.answers[1:]
	return memory.ModelAnswer{Operations: a.Operations, Usage: a.Usage}, a.Err
}

// ErrInjected is a failure tests inject.
var ErrInjected = errors.New("memorytest: injected failure")

// StepClock returns a clock whose first reading is start plus one second
// and which moves one second on at every call, so that every time a store
// stamps is distinct and known. It is safe for concurrent use.
func StepClock(start time.Time) memory.Clock {
	var mu sync.Mutex
	now := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}
