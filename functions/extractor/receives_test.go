package main

import (
	"path/filepath"
	"testing"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// TestModelFailuresNeverReachTheDeadLetterQueue holds DefaultMaxModelReceives
// below the maxReceiveCount of every queue the extractor reads, as
// template.yaml deploys it: a transient model failure is then
// acknowledged before its message could reach a dead-letter queue, as
// docs/runbook.md and docs/extractor.md say. Model outages would otherwise
// fill the dead-letter queues with messages that are not wrong.
func TestModelFailuresNeverReachTheDeadLetterQueue(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := tmpl.Resolve(samtemplate.Options{Region: "us-east-1", AccountID: "123456789012", StackName: "usermemory",
		StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/usermemory/0f5b7c40-3bb5-11f0-9a4b-0a1b2c3d4e5f"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range app.SQSEvents {
		if ev.Function != "ExtractorFunction" {
			continue
		}
		n++
		q := app.Queues[ev.Queue]
		if q == nil || q.DeadLetterQueue == "" {
			t.Errorf("queue %s: no dead-letter queue in template.yaml", ev.Queue)
			continue
		}
		if DefaultMaxModelReceives >= q.MaxReceiveCount {
			t.Errorf("queue %s: maxReceiveCount %d, DefaultMaxModelReceives %d: a transient model failure reaches %s",
				ev.Queue, q.MaxReceiveCount, DefaultMaxModelReceives, q.DeadLetterQueue)
		}
	}
	if n == 0 {
		t.Fatal("template.yaml: no SQS event source of ExtractorFunction")
	}
}
