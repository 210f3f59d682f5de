package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
	"github.com/usermemory/usermemory/schema"
)

// ImportQueue sends the message of an import (schema.ImportMessage) to
// the extraction queue, where the extractor reads it with the import's
// prompt (memory.Store.Import), as the HTTP API's POST /v1/me/imports
// does. Build one with [NewImportQueue].
type ImportQueue struct {
	client   producer.API
	queueURL string
	now      func() time.Time
}

// NewImportQueue returns the ImportQueue of the FIFO extraction queue at
// queueURL, sent to with client (an *sqs.Client).
func NewImportQueue(client producer.API, queueURL string) *ImportQueue {
	return &ImportQueue{client: client, queueURL: queueURL, now: time.Now}
}

// send validates m and sends it in the user's message group, with the
// import's deduplication ID: sending it again is safe.
func (q *ImportQueue) send(ctx context.Context, m schema.ImportMessage) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("gateway: import message: %w", err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(q.queueURL), MessageBody: aws.String(string(body)),
		MessageGroupId:         aws.String(schema.GroupID(m.TenantID, m.UserID)),
		MessageDeduplicationId: aws.String(schema.ImportDeduplicationID(m.TenantID, m.UserID, m.ImportID)),
	})
	if err != nil {
		return fmt.Errorf("gateway: send the import to %s: %w", q.queueURL, err)
	}
	return nil
}

// ErrNoImportQueue is returned by [Gateway.Import] when Config.Imports is
// nil.
var ErrNoImportQueue = errors.New("gateway: Config.Imports is not set: imports cannot be sent")

// Import asks for the facts of a memory list the user pasted from another
// assistant (in.Source names it; exactly one of in.Text and
// in.Statements): it checks the list (memory.CheckImport), leaves the
// import's mark queued in the user's record (memory.Store.QueueImport,
// which refuses a user who made memory.MaxImportsPerDay imports in 24
// hours), and sends the import to the queue (Config.Imports). It returns the import's mark,
// with its new ID and the status memory.ImportQueued: follow it with
// [Gateway.ImportReview]. Nothing imported is kept without the user's
// yes. Errors: *memory.Error CodeInvalidImport, CodeImportTooLong and
// CodeImportLimit; those of the store's reads; [ErrNoImportQueue]; the
// send's.
func (g *Gateway) Import(ctx context.Context, sc memory.Scope, in memory.ImportText) (memory.ImportMark, error) {
	if g.cfg.Imports == nil {
		return memory.ImportMark{}, ErrNoImportQueue
	}
	if err := sc.Validate(); err != nil {
		return memory.ImportMark{}, err
	}
	source, text, err := memory.CheckImport(in)
	if err != nil {
		return memory.ImportMark{}, err
	}
	now := g.cfg.Imports.now().UTC()
	var mark memory.ImportMark
	id := memory.NewImportID(now)
	err = g.retry.do(ctx, func(ctx context.Context) error {
		var err error
		mark, err = g.cfg.Store.QueueImport(ctx, sc, id, source, now)
		return err
	})
	if err != nil {
		return memory.ImportMark{}, err
	}
	m := schema.ImportMessage{Version: 1, Kind: schema.ImportKind, TenantID: sc.TenantID, UserID: sc.UserID,
		ImportID: id, Source: source, Text: text, SentAt: mark.RequestedAt}
	// The FIFO queue drops a copy of the same import: sending again is safe.
	if err := g.retry.do(ctx, func(ctx context.Context) error { return g.cfg.Imports.send(ctx, m) }); err != nil {
		// Not sent: the queued mark goes (best effort), so that it does
		// not read as queued for ever.
		_ = g.cfg.Store.UnqueueImport(context.WithoutCancel(ctx), sc, id)
		return memory.ImportMark{}, err
	}
	return mark, nil
}

// ImportReview is where an import stands and what of it waits for the
// user's review: the GET /v1/me/imports/{importId} of the HTTP API.
type ImportReview struct {
	// Mark is the import's mark; its Status is memory.ImportQueued while
	// the import waits in the queue or is being read.
	Mark memory.ImportMark
	// Pending are the user's pending facts the import proposed, sorted by
	// key.
	Pending []PendingFact
	// Replaces holds, for each key of Pending that holds a stored fact,
	// its value: keeping the pending fact replaces it.
	Replaces map[string]string
}

// ImportReview returns where the import id stands and its facts that
// wait for the user's review; the mark is queued from the moment
// [Gateway.Import] returned. Errors: *memory.Error CodeImportNotFound, at
// once, for an ID the user's record holds no mark of; those of the
// store's reads.
func (g *Gateway) ImportReview(ctx context.Context, sc memory.Scope, id string) (ImportReview, error) {
	var out ImportReview
	err := g.retry.do(ctx, func(ctx context.Context) error {
		mark, ok, err := g.cfg.Store.ImportStatusOf(ctx, sc, id)
		if err != nil {
			return err
		}
		if !ok {
			return memory.ErrImportNotFound
		}
		m, err := g.cfg.Store.GetFactsAndPending(ctx, sc)
		if err != nil {
			return err
		}
		out = ImportReview{Mark: mark, Replaces: map[string]string{}}
		for _, f := range memory.ImportPending(m.Pending, id) {
			out.Pending = append(out.Pending, PendingFact{Fact: f, Until: g.cfg.Store.PendingUntil(f)})
		}
		for _, f := range m.Facts {
			for _, p := range out.Pending {
				if p.Key == f.Key {
					out.Replaces[f.Key] = f.Value
				}
			}
		}
		return nil
	})
	return out, err
}

// KeepImport is the user's yes to every fact the import id proposed that
// still waits: they become facts, in the prompt of every later answer,
// in one write. Only the user may give it, from the host's own user
// interface. It returns the kept facts. Errors: those of
// memory.Store.KeepImport.
func (g *Gateway) KeepImport(ctx context.Context, sc memory.Scope, id string) ([]memory.Fact, error) {
	g.known.drop(sc)
	return g.cfg.Store.KeepImport(ctx, sc, id)
}

// DiscardImport is the user's no to every fact the import id proposed
// that still waits: they are dropped, and a later import of the same
// list does not propose them again. It returns how many it discarded.
// Errors: those of memory.Store.DiscardImport.
func (g *Gateway) DiscardImport(ctx context.Context, sc memory.Scope, id string) (int, error) {
	return g.cfg.Store.DiscardImport(ctx, sc, id)
}

// ImportSummary says, in a line for the user, what an import did: what
// it proposed and what it left out and why, or why it failed or was
// refused, or that it is still being read.
func ImportSummary(m memory.ImportMark) string {
	switch m.Status {
	case memory.ImportQueued:
		return "The list is being read."
	case memory.ImportFailed, memory.ImportRefused:
		why := importReasons[m.Reason]
		if why == "" {
			why = strings.ReplaceAll(or(m.Reason, "no reason given"), "_", " ")
		}
		return fmt.Sprintf("The list from %s was not imported: %s. Nothing was proposed.", m.Source, why)
	}
	s := fmt.Sprintf("Read the list from %s (%s): ", m.Source, plural(m.Parts, "part", "parts"))
	if m.Proposed > 0 {
		s += plural(m.Proposed, "fact", "facts") + " to review."
	} else {
		s += "nothing new to propose."
	}
	if left := leftOutWords(m.LeftOut); len(left) > 0 {
		s += " Left out: " + strings.Join(left, ", ") + "."
	}
	return s
}

// importReasons say why an import failed or was refused, by its Reason.
var importReasons = map[string]string{
	"tenant_budget": "the service's reading budget for today is spent; try again tomorrow",
	"daily_imports": "too many lists imported in the last 24 hours; try again tomorrow",
	"bad_answer":    "the model's answer could not be used; try again",
	"model_failed":  "the model could not be reached; try again later",
}

// leftOutWords say, by reason, what an import found and did not propose,
// in the page's words (web/static/import.js).
func leftOutWords(l memory.ImportLeftOut) []string {
	var out []string
	add := func(n int, s string) {
		if n > 0 {
			out = append(out, s)
		}
	}
	add(l.Instructions, plural(l.Instructions, "instruction", "instructions")+" to the assistant (never kept as a fact)")
	add(l.Secrets, plural(l.Secrets, "secret", "secrets")+" (never kept)")
	add(l.Known, plural(l.Known, "fact", "facts")+" already remembered")
	add(l.Declined, plural(l.Declined, "fact", "facts")+" discarded before")
	add(l.Ended, plural(l.Ended, "plan", "plans")+" already over")
	add(l.Unsupported, plural(l.Unsupported, "fact", "facts")+" not found in the pasted text")
	add(l.Deletes, plural(l.Deletes, "request", "requests")+" to forget something (an import never forgets)")
	add(l.Skipped, plural(l.Skipped, "line", "lines")+" not read as a fact about you")
	add(l.OverCap, plural(l.OverCap, "fact", "facts")+" over the most that can wait for review (keep or discard these, then import again)")
	add(l.NoRoom, plural(l.NoRoom, "fact", "facts")+" with no room left in the memory (remove some facts, then import again)")
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
