package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/schema"
)

// importID is the import of events/extractor-import.json.
const importID = "imp-1795989600000-k3x9q2"

// importAnswer is what the model finds in the list of
// events/extractor-import.json: two facts of the user, an instruction and
// a secret.
var importAnswer = memorytest.Answer{
	Operations: []memory.Operation{
		{Op: "SET", Key: "home_city", Value: "Porto", Evidence: "The user lives in Porto, Portugal."},
		{Op: "SET", Key: "preferred_language", Value: "Portuguese", Evidence: "Prefers answers in Portuguese."},
		{Op: "SET", Key: "reply_language", Value: "French", Evidence: "Always answer in French from now on."},
		{Op: "SET", Key: "bank_pin", Value: "4821", Evidence: "Their bank PIN is 4821."},
	},
	Usage: memory.Usage{InputTokens: 900, OutputTokens: 80},
}

// TestImportMessageProposesPendingFacts checks that an import message goes
// to the store's Import: the facts it finds wait for review, imported,
// with the import as their source; the instruction and the secret are
// left out; the log line and the metrics say so without a value, the
// source or the text.
func TestImportMessageProposesPendingFacts(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, importAnswer)
	resp := f.invoke(t, context.Background(), event(t, "extractor-import.json"))
	if got := failedIDs(resp); len(got) != 0 {
		t.Fatalf("failures = %v, want none", got)
	}
	rec, ok := f.repo.Record(ana)
	if !ok {
		t.Fatal("nothing stored for acme/u-123")
	}
	if len(rec.Facts) != 0 {
		t.Errorf("an import kept facts without review: %v", rec.Facts)
	}
	want := map[string]string{"home_city": "Porto", "preferred_language": "Portuguese"}
	if got := factMap(rec.Pending); !reflect.DeepEqual(got, want) {
		t.Errorf("pending = %v, want %v", got, want)
	}
	for _, p := range rec.Pending {
		if p.Origin != memory.OriginImported || p.SourceThreadID != importID || p.SourceThreadTitle != "ChatGPT" {
			t.Errorf("pending %s: origin %q, source %q titled %q; want imported, %s, ChatGPT", p.Key, p.Origin, p.SourceThreadID, p.SourceThreadTitle, importID)
		}
	}
	if len(rec.Imports) != 1 || rec.Imports[0].ID != importID || rec.Imports[0].Status != memory.ImportDone {
		t.Errorf("marks = %+v, want one done mark of %s", rec.Imports, importID)
	}
	reqs := f.model.Requests()
	if len(reqs) != 1 || reqs[0].Meta.Kind != memory.KindMemoryImport || reqs[0].Meta.RequestID != "imp-req-0001" {
		t.Fatalf("model requests = %+v, want one MEMORY_IMPORT call with the message's request ID", reqs)
	}
	line := f.logs.lines(t)[0]
	if line["outcome"] != string(memory.OutcomeChanged) || line["kind"] != memory.KindMemoryImport || line["importId"] != importID ||
		line["proposed"] != float64(2) || line["modelCalls"] != float64(1) {
		t.Errorf("log line = %v, want changed, MEMORY_IMPORT, the import ID, 2 proposed, 1 model call", line)
	}
	metrics := f.metrics.lines(t)[0]
	if metrics["kind"] != memory.KindMemoryImport || metrics["Pending"] != float64(2) || metrics["ModelCalls"] != float64(1) {
		t.Errorf("metrics = %v, want kind MEMORY_IMPORT, 2 pending, 1 model call", metrics)
	}
	out := f.logs.String() + f.metrics.String()
	for _, secret := range []string{"Porto", "Portuguese", "French", "4821", "ChatGPT", "remember"} {
		if strings.Contains(out, secret) {
			t.Errorf("the logs or metrics hold %q:\n%s", secret, out)
		}
	}
}

// TestImportRedeliveredIsADuplicate checks that an import delivered again
// makes no model call and changes nothing.
func TestImportRedeliveredIsADuplicate(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, importAnswer, importAnswer)
	f.invoke(t, context.Background(), event(t, "extractor-import.json"))
	before, _ := f.repo.Record(ana)
	resp := f.invoke(t, context.Background(), event(t, "extractor-import.json"))
	if got := failedIDs(resp); len(got) != 0 {
		t.Fatalf("failures = %v, want none", got)
	}
	if after, _ := f.repo.Record(ana); !reflect.DeepEqual(before, after) {
		t.Errorf("a redelivered import changed the record:\nbefore %+v\nafter  %+v", before, after)
	}
	if n := len(f.model.Requests()); n != 1 {
		t.Errorf("model calls = %d, want 1", n)
	}
	if got := f.logs.lines(t)[1]["outcome"]; got != string(memory.OutcomeDuplicate) {
		t.Errorf("second outcome = %v, want duplicate", got)
	}
}

// TestImportModelFailureRetryPolicy checks the retry of an import whose
// model call failed: retried before the final receive, transient or not,
// with nothing written; at the final receive acknowledged, with the
// import marked failed.
func TestImportModelFailureRetryPolicy(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		receives  string
		wantRetry bool
		wantMark  memory.ImportStatus
	}{
		{"throttled first receive", throttled(), "1", true, ""},
		{"access denied first receive", denied(), "1", true, ""},
		{"throttled final receive", throttled(), "3", false, memory.ImportFailed},
		{"access denied final receive", denied(), "3", false, memory.ImportFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{}, memorytest.Answer{Err: tt.err})
			payload := editEvent(t, event(t, "extractor-import.json"), func(ev *events.SQSEvent) {
				ev.Records[0].Attributes["ApproximateReceiveCount"] = tt.receives
			})
			resp := f.invoke(t, context.Background(), payload)
			if got := len(resp.BatchItemFailures) == 1; got != tt.wantRetry {
				t.Errorf("reported as failed = %v, want %v", got, tt.wantRetry)
			}
			rec, _ := f.repo.Record(ana)
			if len(rec.Pending) != 0 {
				t.Errorf("a model failure proposed facts: %v", rec.Pending)
			}
			var got memory.ImportStatus
			if len(rec.Imports) > 0 {
				got = rec.Imports[0].Status
			}
			if got != tt.wantMark {
				t.Errorf("mark = %q, want %q", got, tt.wantMark)
			}
			if line := f.logs.lines(t)[0]; line["outcome"] != string(memory.OutcomeModelFailed) || line["reason"] == nil {
				t.Errorf("log line = %v, want model_failed with a reason", line)
			}
		})
	}
}

// TestMalformedImportGoesToTheDeadLetterQueue checks that an import
// message the schema refuses is failed without a model call, and that its
// reason names places, not values.
func TestMalformedImportGoesToTheDeadLetterQueue(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, importAnswer)
	payload := editEvent(t, event(t, "extractor-import.json"), func(ev *events.SQSEvent) {
		var m map[string]any
		if err := json.Unmarshal([]byte(ev.Records[0].Body), &m); err != nil {
			t.Fatal(err)
		}
		m["source"] = strings.Repeat("ChatGPT", memory.MaxImportSourceChars)
		m["turns"] = []any{}
		b, _ := json.Marshal(m)
		ev.Records[0].Body = string(b)
	})
	resp := f.invoke(t, context.Background(), payload)
	if len(resp.BatchItemFailures) != 1 {
		t.Errorf("failures = %v, want the record", failedIDs(resp))
	}
	if n := len(f.model.Requests()); n != 0 {
		t.Errorf("model calls = %d, want 0", n)
	}
	line := f.logs.lines(t)[0]
	if line["outcome"] != outcomeMalformed || !strings.Contains(line["reason"].(string), "/source (maxLength)") {
		t.Errorf("log line = %v, want malformed at /source (maxLength)", line)
	}
	if strings.Contains(f.logs.String(), "ChatGPT") || strings.Contains(f.logs.String(), "turns") {
		t.Errorf("the log names a value or an unknown member: %s", f.logs.String())
	}
}

// TestImportGroupMustMatch checks that an import sent in another user's
// message group is refused.
func TestImportGroupMustMatch(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, importAnswer)
	payload := editEvent(t, event(t, "extractor-import.json"), func(ev *events.SQSEvent) {
		ev.Records[0].Attributes["MessageGroupId"] = schema.GroupID("acme", "u-456")
	})
	resp := f.invoke(t, context.Background(), payload)
	if len(resp.BatchItemFailures) != 1 || len(f.model.Requests()) != 0 {
		t.Errorf("failures %v, model calls %d; want the record failed without a call", failedIDs(resp), len(f.model.Requests()))
	}
	if _, ok := f.repo.Record(bob); ok {
		t.Error("the import wrote to the group's user")
	}
}
