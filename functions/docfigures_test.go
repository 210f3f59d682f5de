package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// templateDefault returns the default of template.yaml's parameter name.
func templateDefault(t *testing.T, name string) any {
	t.Helper()
	p := asMap(asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])[name])
	if p == nil {
		t.Fatalf("template.yaml has no parameter %s", name)
	}
	return p["Default"]
}

// toInt reads a template default, a number in YAML, as an int.
func toInt(t *testing.T, v any) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(fmt.Sprint(v), &n); err != nil {
		t.Fatalf("%v is not a whole number: %v", v, err)
	}
	return n
}

// apiExample returns the JSON example of docs/api.md that follows the
// text lead, decoded into v.
func apiExample(t *testing.T, lead string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), lead)
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(after)
	if !ok || m == nil {
		t.Fatalf("docs/api.md has no JSON example after %q", lead)
	}
	if err := json.Unmarshal([]byte(m[1]), v); err != nil {
		t.Fatalf("docs/api.md's example after %q: %v", lead, err)
	}
}

// TestAPIDocErasureExample holds the erasure answer docs/api.md shows to
// the one the store and the handler's body give: the same facts removed,
// at the same time, under the template's default retention periods.
func TestAPIDocErasureExample(t *testing.T) {
	var doc httpapi.ErasedBody
	apiExample(t, "`DELETE /v1/users/{userId}` answers what went and what remains:", &doc)
	at, err := time.Parse(time.RFC3339, doc.ErasedAt)
	if err != nil {
		t.Fatal(err)
	}
	store, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, sc := context.Background(), memory.Scope{TenantID: "acme", UserID: "ana"}
	for i := range doc.RemovedFacts {
		if _, err := store.Put(ctx, sc, memory.FactInput{Key: fmt.Sprintf("fact_%d", i), Value: "a value"}); err != nil {
			t.Fatal(err)
		}
	}
	env := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil)).Functions["EraseUserFunction"].Env
	r, err := setup.RetentionFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	e, err := store.DeleteByUser(ctx, sc, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := httpapi.NewErasedBody(e); got != doc {
		t.Errorf("docs/api.md's erasure answer is %+v; the code answers %+v", doc, got)
	}
}

// TestAPIDocExportExample holds docs/api.md's export example to the
// code: its format, the key of its thread, and the pendingUntil the store
// gives its pending fact.
func TestAPIDocExportExample(t *testing.T) {
	var doc struct {
		Format  int
		Pending []httpapi.PendingFact
		Threads []struct{ ThreadKey string }
	}
	apiExample(t, "The memory page's \"Download my data\" button saves it as a file.", &doc)
	if len(doc.Pending) != 1 {
		t.Fatalf("docs/api.md's export example has %d pending facts, want 1", len(doc.Pending))
	}
	p := doc.Pending[0]
	if doc.Format != memory.ExportFormat {
		t.Errorf("docs/api.md's export example has format %d; memory.ExportFormat is %d", doc.Format, memory.ExportFormat)
	}
	for _, th := range doc.Threads {
		if k := memory.ThreadKey(p.SourceThreadID); th.ThreadKey != k {
			t.Errorf("docs/api.md's export example keys the thread %s as %q; memory.ThreadKey gives %q", p.SourceThreadID, th.ThreadKey, k)
		}
	}
	at, err := time.Parse(time.RFC3339, p.UpdatedAt)
	if err != nil {
		t.Fatal(err)
	}
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := memory.Fact{Key: p.Key, Value: p.Value, UpdatedAt: at, Origin: memory.Origin(p.Origin), Category: p.Category}
	if got := httpapi.FormatTime(store.PendingUntil(f)); got != p.PendingUntil {
		t.Errorf("docs/api.md's pending fact waits until %s; the store says %s", p.PendingUntil, got)
	}
}

// TestExtractorDocListsTheGeographies writes the block geographies of
// docs/extractor.md, the Regions of each inference-profile prefix, from
// template.yaml's mapping InferenceGeography.
func TestExtractorDocListsTheGeographies(t *testing.T) {
	mapping := asMap(asMap(httpapitest.LoadSAMTemplate(t)["Mappings"])["InferenceGeography"])
	byPrefix := map[string][]string{}
	for region, v := range mapping {
		p := fmt.Sprint(asMap(v)["Prefix"])
		byPrefix[p] = append(byPrefix[p], region)
	}
	var groups []string
	for _, p := range slices.Sorted(maps.Keys(byPrefix)) {
		slices.Sort(byPrefix[p])
		groups = append(groups, strings.Join(byPrefix[p], ", ")+" → `"+p+".`")
	}
	docblock.Check(t, filepath.Join(httpapitest.Root(t), "docs", "extractor.md"), "geographies",
		"mapping `InferenceGeography` ("+strings.Join(groups, "; ")+").")
}

// TestAPIDocLimits writes the block api-limits of docs/api.md: the bounds
// its prose names, from the code's constants and template.yaml's defaults.
func TestAPIDocLimits(t *testing.T) {
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	sec := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s" }
	rows := [][2]string{
		{"`memory.MaxIDLen`, the longest tenant, user or thread ID", fmt.Sprintf("%d characters", memory.MaxIDLen)},
		{"`memory.ThreadKeyLen`, the longest thread ID kept as it is (longer ones are hashed)", fmt.Sprintf("%d characters", memory.ThreadKeyLen)},
		{"`memory.MaxThreadTitleChars`, a thread's title", fmt.Sprintf("%d characters", memory.MaxThreadTitleChars)},
		{"`memory.MaxEvidenceChars`, a fact's evidence", fmt.Sprintf("%d characters", memory.MaxEvidenceChars)},
		{"`memory.MaxValidUntilDays`, the latest `validUntil`", fmt.Sprintf("%d days ahead", memory.MaxValidUntilDays)},
		{"`PendingDays`, a pending fact's wait (template default)", fmt.Sprintf("%v days", app.Parameters["PendingDays"])},
		{"`httpapi.DefaultMaxBodyBytes`, a body after base64 decoding", fmt.Sprintf("%d KiB", httpapi.DefaultMaxBodyBytes/1024)},
		{"`httpapi.ImportMaxBodyBytes`, the body of `POST /v1/me/imports`", fmt.Sprintf("%d KiB", httpapi.ImportMaxBodyBytes/1024)},
		{"`memory.MaxImportChars`, an import's text (statements joined by newlines)", fmt.Sprintf("%d characters", memory.MaxImportChars)},
		{"`memory.MaxImportStatements`, an import's statements", fmt.Sprintf("%d", memory.MaxImportStatements)},
		{"`memory.MaxImportSourceChars`, an import's source", fmt.Sprintf("%d characters", memory.MaxImportSourceChars)},
		{"`memory.ImportPartStatements`, `memory.ImportStatementChars` and `memory.MaxImportParts`, the model calls of an import", fmt.Sprintf("%d statements of at most %d characters each, at most %d calls", memory.ImportPartStatements, memory.ImportStatementChars, memory.MaxImportParts)},
		{"`memory.ImportOperations`, the operations of one import call's answer", fmt.Sprintf("%d a statement, at most %d", memory.ImportOperationsPerStatement, memory.ImportMaxOperations)},
		{"`memory.ImportParallelCalls`, an import's model calls at once in the extractor", fmt.Sprintf("%d", memory.ImportParallelCalls)},
		{"`memory.MaxImportsPerDay`, the imports a user may request in 24 hours", fmt.Sprintf("%d", memory.MaxImportsPerDay)},
		{"`httpapi.AnswerBound`, a request's DynamoDB work", sec(httpapi.AnswerBound)},
		{"`setup.DynamoDBAttemptTimeout`, one DynamoDB attempt", sec(setup.DynamoDBAttemptTimeout)},
		{"`httpapi.RetryAfterSeconds`, the `Retry-After` of a 503", fmt.Sprintf("%d s", httpapi.RetryAfterSeconds)},
		{"a fact function's timeout (template)", sec(app.Functions["PutFactFunction"].Timeout)},
		{"`logref.User`, a user's reference in the logs", fmt.Sprintf("%d hex digits", len(logref.User("acme", "u-123")))},
	}
	lines := []string{"| bound | value |", "|---|---|"}
	for _, r := range rows {
		lines = append(lines, "| "+r[0]+" | "+r[1]+" |")
	}
	docblock.Check(t, filepath.Join(httpapitest.Root(t), "docs", "api.md"), "api-limits", strings.Join(lines, "\n"))
}

// TestRunbookAlarmThresholds writes the block alarm-thresholds of
// docs/runbook.md: every alarm of template.yaml, as the template resolves
// with its defaults, with its metric, threshold, period and how many
// periods make it fire.
func TestRunbookAlarmThresholds(t *testing.T) {
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	lines := []string{"| alarm | metric or expression | fires when | period | periods |", "|---|---|---|---|---|"}
	for _, id := range slices.Sorted(maps.Keys(app.Properties)) {
		p := app.Properties[id]
		if _, ok := p["ComparisonOperator"]; !ok {
			continue
		}
		metric, period := fmt.Sprint(p["MetricName"]), fmt.Sprint(p["Period"])
		if ms, ok := p["Metrics"].([]any); ok {
			metric, period = "", ""
			for _, m := range ms {
				if e, ok := asMap(m)["Expression"].(string); ok && asMap(m)["ReturnData"] != false {
					metric = "`" + strings.ReplaceAll(e, "|", "\\|") + "`"
				}
				if st := asMap(asMap(m)["MetricStat"]); st != nil && period == "" {
					period = fmt.Sprint(st["Period"])
				}
			}
		}
		op := map[string]string{"GreaterThanThreshold": ">", "GreaterThanOrEqualToThreshold": "≥", "LessThanThreshold": "<", "LessThanOrEqualToThreshold": "≤"}[fmt.Sprint(p["ComparisonOperator"])]
		periods := fmt.Sprint(p["EvaluationPeriods"])
		if d, ok := p["DatapointsToAlarm"]; ok {
			periods = fmt.Sprintf("%v of %v", d, p["EvaluationPeriods"])
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s %v | %s s | %s |", id, metric, op, p["Threshold"], period, periods))
	}
	docblock.Check(t, filepath.Join(httpapitest.Root(t), "docs", "runbook.md"), "alarm-thresholds", strings.Join(lines, "\n"))
}
