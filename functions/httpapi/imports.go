package httpapi

import (
	"github.com/usermemory/usermemory/memory"
)

// Located is an answer that carries a Location header: the body of the
// answer and the path of the resource it made (202 to POST
// /v1/me/imports).
type Located struct {
	Body     any
	Location string
}

// ImportView is an import as the API shows it: where it stands and what
// it found ([memory.ImportMark]).
type ImportView struct {
	ImportID string `json:"importId"`
	// Source is the assistant the list comes from, as the user named it.
	Source string `json:"source"`
	// Status is queued, done, failed or refused; Reason says why an import
	// failed or was refused.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// RequestedAt and DoneAt are RFC 3339 in UTC; DoneAt is left out while
	// queued.
	RequestedAt string `json:"requestedAt"`
	DoneAt      string `json:"doneAt,omitempty"`
	// Parts counts the model calls that read the text, Statements the
	// statements they read; Proposed the facts that wait for the user's
	// review.
	Parts      int         `json:"parts"`
	Statements int         `json:"statements"`
	Proposed   int         `json:"proposed"`
	LeftOut    LeftOutView `json:"leftOut"`
}

// LeftOutView counts what an import found and did not propose, by reason
// ([memory.ImportLeftOut]).
type LeftOutView struct {
	Secrets      int `json:"secrets"`
	Instructions int `json:"instructions"`
	Unsupported  int `json:"unsupported"`
	Ended        int `json:"ended"`
	Known        int `json:"known"`
	Declined     int `json:"declined"`
	Deletes      int `json:"deletes"`
	Skipped      int `json:"skipped"`
	OverCap      int `json:"overCap"`
	NoRoom       int `json:"noRoom"`
}

// ImportViewOf returns the API form of the mark m.
func ImportViewOf(m memory.ImportMark) ImportView {
	lo := m.LeftOut
	v := ImportView{ImportID: m.ID, Source: m.Source, Status: string(m.Status), Reason: m.Reason,
		RequestedAt: FormatTime(m.RequestedAt), Parts: m.Parts, Statements: m.Statements, Proposed: m.Proposed,
		LeftOut: LeftOutView{Secrets: lo.Secrets, Instructions: lo.Instructions, Unsupported: lo.Unsupported,
			Ended: lo.Ended, Known: lo.Known, Declined: lo.Declined, Deletes: lo.Deletes, Skipped: lo.Skipped, OverCap: lo.OverCap, NoRoom: lo.NoRoom}}
	if !m.DoneAt.IsZero() {
		v.DoneAt = FormatTime(m.DoneAt)
	}
	return v
}

// ImportBody is the body of a 202 to POST /v1/me/imports.
type ImportBody struct {
	Import ImportView `json:"import"`
}

// ImportStatusBody is the body of a 200 to GET /v1/me/imports/{importId}:
// the import, its facts that wait for the user's review, and for those
// whose key holds a stored fact, that fact's value (the conflict shows
// both).
type ImportStatusBody struct {
	Import   ImportView        `json:"import"`
	Pending  []PendingFact     `json:"pending"`
	Replaces map[string]string `json:"replaces"`
}

// NewImportStatusBody returns the body of GET /v1/me/imports/{importId}
// for the import v of a user of s and its review rv: the pending facts
// whose source is the import, and the stored values they would replace;
// empty list and object rather than null.
func NewImportStatusBody(s *memory.Store, v ImportView, rv memory.ImportReview) ImportStatusBody {
	replaces := rv.Replaces
	if replaces == nil {
		replaces = map[string]string{}
	}
	return ImportStatusBody{Import: v, Pending: PendingOf(s, rv.Pending), Replaces: replaces}
}

// KeptBody is the body of a 200 to POST /v1/me/imports/{importId}/keep:
// the facts kept, sorted as the store returns them.
type KeptBody struct {
	Kept []Fact `json:"kept"`
}

// NewKeptBody returns the body listing the kept facts, never null.
func NewKeptBody(kept []memory.Fact) KeptBody {
	out := KeptBody{Kept: make([]Fact, 0, len(kept))}
	for _, f := range kept {
		out.Kept = append(out.Kept, FactOf(f))
	}
	return out
}

// DiscardedBody is the body of a 200 to DELETE
// /v1/me/imports/{importId}/pending: how many pending facts were
// discarded.
type DiscardedBody struct {
	Discarded int `json:"discarded"`
}
