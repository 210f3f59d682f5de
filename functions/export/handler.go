// Command export is the Lambda function of GET /v1/me/export and GET
// /v1/users/{userId}/export: everything the service holds about a user as
// one JSON document (GDPR Art. 15 access, Art. 20 portability). Each
// download leaves an audit line.
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// newHandler serves the routes of this function, as in template.yaml: it
// reads the user's whole record and answers it as a [document].
var newHandler = httpapi.NewHandlerFor([]string{"GET /v1/me/export", "GET /v1/users/{userId}/export"},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		e, err := s.Export(ctx, r.Scope)
		return documentOf(s, r.Scope, e), err
	})

// document is the body of a 200: api/openapi.yaml's Export.
type document struct {
	Format     int            `json:"format"`
	ExportedAt string         `json:"exportedAt"`
	TenantID   string         `json:"tenantId"`
	UserID     string         `json:"userId"`
	Facts      []httpapi.Fact `json:"facts"`
	// Pending are the facts that wait for the user's yes.
	Pending   []httpapi.PendingFact `json:"pending"`
	Forgotten []forgotten           `json:"forgotten"`
	ClearedAt string                `json:"clearedAt,omitempty"`
	ErasedAt  string                `json:"erasedAt,omitempty"`
	Threads   []threadWatermark     `json:"threads"`
	// Imports are the user's newest imports from another assistant, newest
	// first: what was imported and when.
	Imports []httpapi.ImportView `json:"imports"`
}

type forgotten struct {
	Key         string `json:"key"`
	ForgottenAt string `json:"forgottenAt"`
}

type threadWatermark struct {
	ThreadKey   string `json:"threadKey"`
	TurnCount   int    `json:"turnCount"`
	TurnsDigest string `json:"turnsDigest,omitempty"`
	ExtractedAt string `json:"extractedAt"`
	// ForgottenAt is when the user last forgot what the thread taught
	// (its fence), if they did.
	ForgottenAt string `json:"forgottenAt,omitempty"`
}

// documentOf returns the document of e, the export of the user sc from s.
// Facts and pending facts take the form GET .../facts gives them
// (httpapi.FactOf, httpapi.PendingOf), so that a member added to a fact
// appears here too.
func documentOf(s *memory.Store, sc memory.Scope, e memory.Export) document {
	d := document{Format: memory.ExportFormat, ExportedAt: httpapi.FormatTime(e.At), TenantID: sc.TenantID, UserID: sc.UserID,
		Facts: make([]httpapi.Fact, 0, len(e.Facts)), Pending: httpapi.PendingOf(s, e.Pending), Forgotten: make([]forgotten, 0, len(e.Forgotten)),
		ClearedAt: httpapi.FormatTime(e.ClearedAt), ErasedAt: httpapi.FormatTime(e.ErasedAt), Threads: make([]threadWatermark, 0, len(e.Threads)),
		Imports: make([]httpapi.ImportView, 0, len(e.Imports))}
	for _, m := range e.Imports {
		d.Imports = append(d.Imports, httpapi.ImportViewOf(m))
	}
	hist := make(map[string][]memory.PreviousValue, len(e.History))
	for _, h := range e.History {
		hist[h.Key] = h.Previous
	}
	for _, f := range e.Facts {
		d.Facts = append(d.Facts, httpapi.WithHistory(httpapi.FactOf(f), hist[f.Key]))
	}
	for _, f := range e.Forgotten {
		d.Forgotten = append(d.Forgotten, forgotten{Key: f.Key, ForgottenAt: httpapi.FormatTime(f.At)})
	}
	for _, w := range e.Threads {
		d.Threads = append(d.Threads, threadWatermark{ThreadKey: w.ThreadKey, TurnCount: w.TurnCount, TurnsDigest: w.Digest, ExtractedAt: httpapi.FormatTime(w.At),
			ForgottenAt: httpapi.FormatTime(w.ForgottenAt)})
	}
	return d
}
