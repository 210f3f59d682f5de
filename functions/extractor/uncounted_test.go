package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
)

// TestUncountedMessageIsLearnedOnce delivers the message of the behaviour
// reference's extract arguments (no turn counts, events/
// extractor-uncounted.json): it is due and learned; delivered again, and
// then re-sent as an identical body with a new message ID and a later
// SentTimestamp (past SQS's five-minute deduplication), it is a duplicate:
// one model call in all, one write. Its log line says uncounted and holds
// neither the digest nor any turn text.
func TestUncountedMessageIsLearnedOnce(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	payload := event(t, "extractor-uncounted.json")
	resent := editEvent(t, payload, func(ev *events.SQSEvent) {
		ev.Records[0].MessageId = "0b8f4c1e-1111-4a51-9a3e-000000000102"
		ev.Records[0].Attributes["SentTimestamp"] = "1795990200000" // ten minutes later
	})
	var version string
	for i, p := range [][]byte{payload, payload, resent} {
		if got := failedIDs(f.invoke(t, context.Background(), p)); len(got) != 0 {
			t.Fatalf("delivery %d: failures %v", i, got)
		}
		rec, _ := f.repo.Record(ana)
		if i == 0 {
			version = rec.Version
		} else if rec.Version != version {
			t.Errorf("delivery %d wrote", i)
		}
	}
	if f.model.Calls() != 1 {
		t.Errorf("%d model calls, want 1", f.model.Calls())
	}
	rec, _ := f.repo.Record(ana)
	if got := factMap(rec.Facts); len(got) != 3 || got["home_city"] != "Lisbon" {
		t.Errorf("facts %v", got)
	}
	mark := rec.Threads["th-9"]
	if !memory.IsTurnsDigest(mark.Digest) || mark.TurnCount != 0 {
		t.Errorf("watermark %+v, want a digest", mark)
	}
	lines := f.logs.lines(t)
	want := []string{"changed", "duplicate", "duplicate"}
	if len(lines) != len(want) {
		t.Fatalf("%d log lines, want %d", len(lines), len(want))
	}
	for i, l := range lines {
		if l["outcome"] != want[i] || l["uncounted"] != true {
			t.Errorf("log line %d: outcome %v, uncounted %v; want %s, true", i, l["outcome"], l["uncounted"], want[i])
		}
	}
	for _, leak := range []string{mark.Digest, "Lisbon", "Ana"} {
		if strings.Contains(f.logs.String(), leak) {
			t.Errorf("the logs hold %q", leak)
		}
	}
}

// TestUncountedMessageDueRule: an uncounted message is due even where a
// counted one would not be (it carries no counts to judge by), but not
// while extraction is switched off; one count without the other is
// malformed.
func TestUncountedMessageDueRule(t *testing.T) {
	off := newFixture(t, fixtureOpts{cfg: memory.Config{ExtractionDisabled: true}}, anaOK)
	off.invoke(t, context.Background(), event(t, "extractor-uncounted.json"))
	if got := off.outcomes(t)[firstUncountedID]; got != string(memory.OutcomeDisabled) || off.model.Calls() != 0 || off.repo.Calls("Get") != 0 {
		t.Errorf("extraction off: outcome %q, %d model calls, %d reads", got, off.model.Calls(), off.repo.Calls("Get"))
	}
	for _, body := range []string{`"previousTurnCount":4,"turns"`, `"turnCount":4,"turns"`} {
		f := newFixture(t, fixtureOpts{}, anaOK)
		p := editEvent(t, event(t, "extractor-uncounted.json"), func(ev *events.SQSEvent) {
			ev.Records[0].Body = strings.Replace(ev.Records[0].Body, `"turns"`, body, 1)
		})
		resp := f.invoke(t, context.Background(), p)
		if got := f.outcomes(t)[firstUncountedID]; got != outcomeMalformed || len(resp.BatchItemFailures) != 1 || f.model.Calls() != 0 {
			t.Errorf("%s alone: outcome %q, failures %v", body, got, failedIDs(resp))
		}
	}
}

// firstUncountedID is the message ID of events/extractor-uncounted.json.
const firstUncountedID = "0b8f4c1e-1111-4a51-9a3e-000000000101"
