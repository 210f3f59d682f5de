package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/schema"
)

// checkFigures holds the figures of docs/<name> to the code.
func checkFigures(t *testing.T, name string, figures docblock.Figures) {
	t.Helper()
	docblock.CheckFigures(t, filepath.Join(httpapitest.Root(t), "docs", name), figures)
}

// templateDefault returns the default of template.yaml's parameter name.
func templateDefault(t *testing.T, name string) any {
	t.Helper()
	p := asMap(asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])[name])
	if p == nil {
		t.Fatalf("template.yaml has no parameter %s", name)
	}
	return p["Default"]
}

// TestScaleDocFigures holds the figures docs/scale.md writes outside its
// generated block (scripts/cost writes and holds the block) to the
// template's defaults and the code's constants.
func TestScaleDocFigures(t *testing.T) {
	d := func(name string) any { return templateDefault(t, name) }
	checkFigures(t, "scale.md", docblock.Figures{
		"`ReadRateLimit` ([0-9,]+) requests/s":                  d("ReadRateLimit"),
		"`ReadBurstLimit` ([0-9,]+)":                            d("ReadBurstLimit"),
		"`EditRateLimit` ([0-9,]+)":                             d("EditRateLimit"),
		"`EditBurstLimit` ([0-9,]+)":                            d("EditBurstLimit"),
		"`ExtractorMaxConcurrency` ([0-9]+) stays":              d("ExtractorMaxConcurrency"),
		"`TenantDailyModelCalls`\\) is ([0-9]+)":                d("TenantDailyModelCalls"),
		"`bedrock.FirstMaxTokens` \\(([0-9,]+)\\)":              bedrock.FirstMaxTokens,
		"`bedrock.MaxTokensFor` ([0-9,]+) tokens":               bedrock.MaxTokensFor(len(memory.LargestAnswer(memory.DefaultMaxOperations, memory.DefaultMaxFactChars))),
		"at most `bedrock.MaxTokensUpperBound` \\(([0-9,]+)\\)": bedrock.MaxTokensUpperBound,
		"`MaxOperations` ([0-9]+) operations":                   memory.DefaultMaxOperations,
		"keys and values of ([0-9]+) characters":                memory.DefaultMaxFactChars,
		"`DefaultBudgetShards` \\(([0-9]+)\\)":                  dynamorepo.DefaultBudgetShards,
	})
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

// TestRunbookFigures holds the thresholds, periods and defaults
// docs/runbook.md writes to the alarms and queue of template.yaml, as
// the template resolves with its defaults.
func TestRunbookFigures(t *testing.T) {
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	alarm := func(id, key string) any {
		p, ok := app.Properties[id]
		if !ok {
			t.Fatalf("template.yaml has no %s with the defaults", id)
		}
		return p[key]
	}
	minutes := func(id string) int { return toInt(t, alarm(id, "Period")) / 60 }
	least := func(id string) string { return alarmLeast(t, app, id) }
	metricPeriod := func(id string) int {
		return toInt(t, asMap(asMap(alarm(id, "Metrics").([]any)[0])["MetricStat"])["Period"]) / 60
	}
	q := app.Queues["ExtractionQueue"]
	p := app.Parameters
	checkFigures(t, "runbook.md", docblock.Figures{
		"`ExtractionDelayAlarmSeconds` \\(default ([0-9,]+) s":           p["ExtractionDelayAlarmSeconds"],
		"default ([0-9,]+) s, the visibility timeout":                    int(q.VisibilityTimeout.Seconds()) * (q.MaxReceiveCount + 1),
		"the visibility timeout of ([0-9]+) s":                           int(q.VisibilityTimeout.Seconds()),
		"the visibility timeout of [0-9]+ s times the ([0-9]+) receives": q.MaxReceiveCount,
		"dead-letter queue after ([0-9]+) receives":                      q.MaxReceiveCount,
		`queue's retention \(([0-9]+) days\)`:                            toInt(t, q.Attributes["MessageRetentionPeriod"]) / 86400,
		"more than ([0-9]+) answers in [0-9]+ minutes":                   alarm("ExtractorBadAnswerAlarm", "Threshold"),
		"more than [0-9]+ answers in ([0-9]+) minutes":                   minutes("ExtractorBadAnswerAlarm"),
		"at most ([0-9,]+)\\): lower `MaxFactChars`":                     bedrock.MaxTokensUpperBound,
		"`UnsupportedAlarmPercent` \\(([0-9]+) % by default\\)":          p["UnsupportedAlarmPercent"],
		"in an hour, at least ([0-9]+) of them":                          least("ExtractorUnsupportedAlarm"),
		"`ApiErrorRateAlarmPercent` \\(default ([0-9]+) %\\)":            p["ApiErrorRateAlarmPercent"],
		"requests in ([0-9]+) minutes were answered 5xx":                 metricPeriod("ApiServerErrorsAlarm"),
		"5xx \\(with at least ([0-9]+) requests\\)":                      least("ApiServerErrorsAlarm"),
		"`ApiClientErrorRateAlarmPercent` \\(default ([0-9]+) %\\)":      p["ApiClientErrorRateAlarmPercent"],
		"in ([0-9]+) minutes were answered 4xx":                          metricPeriod("ApiClientErrorsAlarm"),
		"4xx \\(with at least ([0-9]+) requests\\)":                      least("ApiClientErrorsAlarm"),
		"`ApiLatencyAlarmMilliseconds` \\(default ([0-9,]+) ms\\)":       p["ApiLatencyAlarmMilliseconds"],
		"in two ([0-9]+)-minute periods of three":                        minutes("ApiLatencyAlarm"),
		"in (two) [0-9]+-minute periods":                                 words[toInt(t, alarm("ApiLatencyAlarm", "DatapointsToAlarm"))],
		"periods of (three)":                                             words[toInt(t, alarm("ApiLatencyAlarm", "EvaluationPeriods"))],
	})
}

// alarmLeast returns the "at least" of the metric-math alarm id of app:
// the N of its expression IF(x >= N, …).
func alarmLeast(t *testing.T, app *samtemplate.App, id string) string {
	t.Helper()
	metrics, _ := app.Properties[id]["Metrics"].([]any)
	for _, m := range metrics {
		if e, ok := asMap(m)["Expression"].(string); ok {
			if n := regexp.MustCompile(`^IF\(\w+ >= (\d+),`).FindStringSubmatch(e); n != nil {
				return n[1]
			}
		}
	}
	t.Fatalf("%s has no IF(x >= N, …) expression", id)
	return ""
}

// words spells the small counts the documents write in words.
var words = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}

// TestAPIDocFigures holds the limits, defaults and error codes
// docs/api.md writes in its prose (docs/errors.md's table is held by
// functions/httpapi) to the code and the template.
func TestAPIDocFigures(t *testing.T) {
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	day := 24 * time.Hour
	checkFigures(t, "api.md", docblock.Figures{
		"`threadTitle` of the extraction message, at most ([0-9]+) characters":    memory.MaxThreadTitleChars,
		`user's own words it rests on \(at most ([0-9]+) characters\)`:            memory.MaxEvidenceChars,
		"from today to ([0-9]+) days ahead":                                       memory.MaxValidUntilDays,
		"([0-9]+) days ahead; anything else is 400 with code":                     memory.MaxValidUntilDays,
		"days ahead; anything else is 400 with code ([0-9]+)":                     memory.CodeInvalidValidUntil,
		"not a day the core accepts \\(above\\): 400, ([0-9]+)":                   memory.CodeInvalidValidUntil,
		"a password\\) is 400 with code ([0-9]+)":                                 memory.CodeSecretRefused,
		"`conversation` or any other value is 400 with code ([0-9]+)":             memory.CodeInvalidOrigin,
		"other than `manual` and `remember_tool`: 400, ([0-9]+)":                  memory.CodeInvalidOrigin,
		"`PendingDays` after they were proposed, ([0-9]+) by default":             app.Parameters["PendingDays"],
		"they were proposed, ([0-9]+) by default":                                 int(memory.DefaultPendingLifetime / day),
		"`TenantClaim`, default `([a-z_]+)`":                                      app.Parameters["TenantClaim"],
		"parameter `TenantClaim`, default `([a-z_]+)`":                            setup.DefaultTenantClaim,
		"valid ID \\(1–([0-9]+) of":                                               memory.MaxIDLen,
		"`USER_SCOPE` \\(default `([a-z/]+)`\\)":                                  setup.DefaultUserScope,
		"`ADMIN_SCOPE` \\(default `([a-z/]+)`\\)":                                 setup.DefaultAdminScope,
		"thread ID longer than ([0-9]+) characters":                               memory.ThreadKeyLen,
		"Over ([0-9]+) KiB \\(decoded\\) is 413":                                  httpapi.DefaultMaxBodyBytes / 1024,
		"gets at most ([0-9]+) seconds \\(`httpapi.AnswerBound`\\)":               int(httpapi.AnswerBound / time.Second),
		"attempt gets at most ([0-9]+) seconds \\(`setup.DynamoDBAttemptTimeout`": int(setup.DynamoDBAttemptTimeout / time.Second),
		"code `([0-9]+)` \\(`CodeUnavailable`\\)":                                 httpapi.CodeUnavailable,
		"`Retry-After: ([0-9]+)`":                                                 httpapi.RetryAfterSeconds,
		"the function's ([0-9]+)-second timeout":                                  int(app.Functions["PutFactFunction"].Timeout / time.Second),
		"trailing data after the object \\(white space aside\\): 400, ([0-9]+)":   httpapi.CodeMalformedBody,
		"400, ([0-9]+) \\(RFC 7493 section 2.3\\)":                                httpapi.CodeDuplicateMember,
		"`sub` and the like: 400, ([0-9]+)":                                       httpapi.CodeIdentityInBody,
		"another member: 400, ([0-9]+)":                                           httpapi.CodeUnknownField,
		"`\\{\"value\":null\\}`: 400, ([0-9]+)":                                   memory.CodeEmptyFact,
		"400 with ([0-9]+) for the path":                                          memory.CodeInvalidID,
		"401 with ([0-9]+) for a claim":                                           httpapi.CodeUnauthenticated,
		"past the target of ([0-9.]+) times a hello-world":                        benchTarget(t, startUpTarget),
	})
}

// TestDecisionsDocFigures holds the defaults, bounds, codes and windows
// docs/decisions.md writes by hand to the code and the template (the
// largest-record figures are held by dynamorepo's
// TestFullRecordFitsTheBudget, the watermark sizes by its mark test).
func TestDecisionsDocFigures(t *testing.T) {
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	tpl := asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])
	cfg := memory.Config{}.WithDefaults()
	one, two := cfg, cfg
	one.MaxTombstones, two.MaxTombstones = 1, 2
	perTombstone := two.MaxRecordBytes() - one.MaxRecordBytes()
	q := app.Queues["ExtractionQueue"]
	day := 24 * time.Hour
	checkFigures(t, "decisions.md", docblock.Figures{
		"`maxFacts` ([0-9]+), `maxFactChars`":                                   memory.DefaultMaxFacts,
		"`maxFactChars` ([0-9]+), `extractEveryTurns`":                          memory.DefaultMaxFactChars,
		"`extractEveryTurns` ([0-9]+), transcript budget":                       memory.DefaultExtractEveryTurns,
		"transcript budget ([0-9,]+) characters":                                memory.DefaultTranscriptChars,
		"at most ([0-9]+) operations per answer":                                cfg.MaxOperations,
		"extractor.md\\), ([0-9]+) thread watermarks":                           memory.DefaultMaxThreads,
		"could pass ([0-9]+) KB":                                                memory.ItemBudget / 1024,
		"under DynamoDB's ([0-9]+) KB item limit":                               dynamorepo.MaxItemBytes / 1024,
		"is empty \\(error ([0-9]+)\\)":                                         memory.CodeEmptyFact,
		"runes is a 400 \\(([0-9]+), with a userMessage\\)":                     memory.CodeFactTooLong,
		"bound of operations is refused whole \\(([0-9]+)\\)":                   memory.CodeBadAnswer,
		"without it, 403 ([0-9]+)\\)":                                           memory.CodeApprovalRequired,
		"The ([0-9]+) most recently extracted threads":                          memory.DefaultMaxThreads,
		"when it is at most ([0-9]+) bytes":                                     memory.ThreadKeyLen,
		"in URL-safe base64 \\(([0-9]+) bytes\\)":                               memory.ThreadKeyLen,
		"the source queue keeps one ([0-9]+) days":                              toInt(t, q.Attributes["MessageRetentionPeriod"]) / 86400,
		"`maxReceiveCount` ([0-9]+)":                                            q.MaxReceiveCount,
		"the dead-letter queue ([0-9]+) days by default":                        toInt(t, app.Parameters["DeadLetterRetentionSeconds"]) / 86400,
		"days by default, up to ([0-9]+), for a redrive":                        toInt(t, asMap(tpl["DeadLetterRetentionSeconds"])["MaxValue"]) / 86400,
		"then up to ([0-9]+) \\(`DeadLetterRetentionSeconds` at its maximum\\)": toInt(t, asMap(tpl["DeadLetterRetentionSeconds"])["MaxValue"]) / 86400,
		"\\(default `maxFacts`, at most ([0-9]+)\\)":                            memory.MaxFactsUpperBound,
		"runes of 4 bytes and ([0-9]+) bytes more\\)":                           perTombstone - 4*cfg.MaxFactChars,
		"under the defaults the ([0-9]+) tombstones":                            cfg.MaxTombstones,
		"tombstones take at most ([0-9,]+) bytes":                               cfg.MaxTombstones * perTombstone,
		"bytes of the ([0-9,]+) bound of a full record":                         cfg.MaxRecordBytes(),
		"older than ([0-9]+) days \\(`memory.DeletionFenceLifetime`":            int(memory.DeletionFenceLifetime / day),
		"TTL attribute, ([0-9]+) days later by default":                         app.Functions["EraseUserFunction"].Env[setup.EnvFenceDays],
		"IDs are 1–([0-9]+) characters":                                         memory.MaxIDLen,
		"and `MaxPending` \\(([0-9]+)\\)":                                       memory.DefaultMaxPending,
		"`MaxFacts` is now at most ([0-9]+):":                                   asMap(tpl["MaxFacts"])["MaxValue"],
	})
	checkFigures(t, "decisions.md", watermarkFigures(t, toInt(t, q.Attributes["MessageRetentionPeriod"])/86400))
	checkFigures(t, "decisions.md", recordFigures(t, toInt(t, app.Functions["EraseUserFunction"].Env[setup.EnvFenceDays]),
		toInt(t, asMap(tpl["DeadLetterRetentionSeconds"])["MaxValue"])/86400, toInt(t, q.Attributes["MessageRetentionPeriod"])/86400))
}

// watermarkFigures are the figures of docs/decisions.md's reasons for the
// watermarks' hash and count: the bits of memory.ThreadKey, the chance of
// a collision, and the days the watermarks cover at the cost profile's
// threads a day (docs/cost.md, held by scripts/cost), against the source
// queue's queueDays.
func watermarkFigures(t *testing.T, queueDays int) docblock.Figures {
	hashed := memory.ThreadKey(strings.Repeat("x", memory.ThreadKeyLen+1))
	bits := (len(hashed) - 1) * 6
	threads := memory.DefaultMaxThreads
	chance := float64(threads) / math.Pow(2, float64(bits))
	const users, threadsAYear = 10_000_000, 1_000 // the paragraph's assumptions
	perYear := chance * users * threadsAYear
	mant, exp := scientific(chance)
	yearMant, yearExp := scientific(perYear)
	cost, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "cost.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`answers a day spread over ([0-9]+) threads`).FindSubmatch(cost)
	if m == nil {
		t.Fatal("docs/cost.md no longer says over how many threads a day its profile spreads")
	}
	perDay := toInt(t, string(m[1]))
	return docblock.Figures{
		"first ([0-9]+) bits of its SHA-256":                 bits,
		"\\*\\*Why ([0-9]+) bits\\.":                         bits,
		"do; ([0-9]+) fill [0-9]+ base64 characters":         bits,
		"do; [0-9]+ fill ([0-9]+) base64 characters":         len(hashed) - 1,
		"each new thread meets at most ([0-9]+) keys":        threads,
		"a chance of ([0-9]+) / 2":                           threads,
		"a chance of [0-9]+ / 2([⁰¹²³⁴⁵⁶⁷⁸⁹]+)":              superscript(bits),
		"/ 2[⁰¹²³⁴⁵⁶⁷⁸⁹]+ ≈ ([0-9.]+) ×":                     fmt.Sprintf("%.1f", mant),
		"/ 2[⁰¹²³⁴⁵⁶⁷⁸⁹]+ ≈ [0-9.]+ × 10⁻([⁰¹²³⁴⁵⁶⁷⁸⁹]+)":    superscript(-exp),
		"have about ([0-9.]+) × 10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+ collisions": fmt.Sprintf("%.1f", yearMant),
		"have about [0-9.]+ × 10⁻([⁰¹²³⁴⁵⁶⁷⁸⁹]+) collisions": superscript(-yearExp),
		"collisions a year, one in ([a-z]+) billion years":   words[int(1/perYear/1e9)],
		"\\*\\*Why ([0-9]+) watermarks still":                threads,
		"go first, so ([0-9]+) cover":                        threads,
		"cover ([0-9]+) days of the cost profile's":          threads / perDay,
		"the cost profile's ([0-9]+) threads a day":          perDay,
		"past the source queue's ([0-9]+) days":              queueDays,
		"for anyone under ([0-9]+) threads a day":            threads / queueDays,
		"So the default stays ([0-9]+)":                      threads,
	}
}

// recordFigures are the figures of docs/decisions.md on the erasure
// fence's margin and on the largest record: the former bounds' record,
// the budget's share, the widest config of memory.MaxFactCharsUpperBound.
func recordFigures(t *testing.T, fenceDays, maxDLQDays, queueDays int) docblock.Figures {
	t.Helper()
	former := memory.Config{MaxFacts: 100, MaxFactChars: 200}.WithDefaults() // the template's bounds before evidence
	largest := memory.Config{MaxFacts: toInt(t, asMap(asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])["MaxFacts"])["MaxValue"]),
		MaxFactChars: toInt(t, asMap(asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])["MaxFactChars"])["MaxValue"])}.WithDefaults()
	widest := memory.Config{MaxFactChars: memory.MaxFactCharsUpperBound}
	for widest.MaxFacts = 1; widest.Validate() == nil; widest.MaxFacts++ {
	}
	widest.MaxFacts--
	quarter := map[bool]string{true: "quarter", false: "fraction"}
	return docblock.Figures{
		"A message can live ([0-9]+) days in the extraction queue": queueDays,
		"retention\"\\): ([0-9]+) days, and":                       queueDays + maxDLQDays,
		"days, and ([a-z]+) of margin":                             words[fenceDays-queueDays-maxDLQDays],
		"counts evidence \\(([0-9]+) runes of 4 bytes a fact\\)":   memory.MaxEvidenceChars,
		"`MaxFactChars` 200\\) allowed ([0-9,]+) bytes":            former.MaxRecordBytes(),
		"over the ([0-9]+) KB budget":                              memory.ItemBudget / 1024,
		"bytes, ([0-9]+)% of the budget":                           fmt.Sprintf("%.0f", 100*float64(largest.MaxRecordBytes())/memory.ItemBudget),
		"the longest keys \\(([0-9]+) facts of":                    widest.MaxFacts,
		"\\([0-9]+ facts of ([0-9,]+) characters":                  widest.MaxFactChars,
		"a ([a-z]+) under DynamoDB's":                              quarter[4*(dynamorepo.MaxItemBytes-memory.ItemBudget) == dynamorepo.MaxItemBytes],
	}
}

// scientific returns x as m × 10^e with 1 ≤ m < 10.
func scientific(x float64) (float64, int) {
	e := int(math.Floor(math.Log10(x)))
	return x / math.Pow(10, float64(e)), e
}

// superscript writes n with superscript digits, as the documents write
// powers.
func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, c := range strconv.Itoa(n) {
		b.WriteString(string([]rune(digits)[c-'0']))
	}
	return b.String()
}

// TestPrivacyDocFigures holds the figures docs/privacy.md writes beside
// its `name` = value windows (held by TestPrivacyMapIsTheTemplates): the
// windows in days, their ranges, the sums of a message's life, and what
// the records hold.
func TestPrivacyDocFigures(t *testing.T) {
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	params := asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])
	bound := func(name, key string) int { return toInt(t, asMap(params[name])[key]) }
	const daySeconds = 86400
	queueDays := toInt(t, app.Queues["ExtractionQueue"].Attributes["MessageRetentionPeriod"]) / daySeconds
	dlqDays := toInt(t, app.Parameters["DeadLetterRetentionSeconds"]) / daySeconds
	pitr := app.Parameters["PointInTimeRecoveryDays"]
	checkFigures(t, "privacy.md", docblock.Figures{
		"`PointInTimeRecoveryDays` = [0-9]+ \\(days\\) \\| ([0-9]+)–":       bound("PointInTimeRecoveryDays", "MinValue"),
		"`PointInTimeRecoveryDays` = [0-9]+ \\(days\\) \\| [0-9]+–([0-9]+)": bound("PointInTimeRecoveryDays", "MaxValue"),
		"The range 1–([0-9]+) is DynamoDB's":                                bound("PointInTimeRecoveryDays", "MaxValue"),
		"MessageRetentionPeriod` = [0-9]+ \\(s, ([0-9]+) days\\)":           queueDays,
		"`DeadLetterRetentionSeconds` = [0-9]+ \\(s, ([0-9]+) days\\) \\| ": dlqDays,
		"\\(s, [0-9]+ days\\) \\| ([0-9]+)–[0-9]+ days":                     bound("DeadLetterRetentionSeconds", "MinValue") / daySeconds,
		"\\(s, [0-9]+ days\\) \\| [0-9]+–([0-9]+) days":                     bound("DeadLetterRetentionSeconds", "MaxValue") / daySeconds,
		"Point-in-time recovery, ([0-9]+) days":                             pitr,
		"Dead-letter queue, ([0-9]+) days":                                  dlqDays,
		"\\(it was ([0-9]+), SQS's maximum\\)":                              bound("DeadLetterRetentionSeconds", "MaxValue") / daySeconds,
		"The lower bound, ([0-9]+) day,":                                    bound("DeadLetterRetentionSeconds", "MinValue") / daySeconds,
		"\\(backups ([0-9]+) days;":                                         pitr,
		"queued messages ([0-9]+) \\+ [0-9]+ = [0-9]+ days":                 queueDays,
		"queued messages [0-9]+ \\+ ([0-9]+) = [0-9]+ days":                 dlqDays,
		"queued messages [0-9]+ \\+ [0-9]+ = ([0-9]+) days":                 queueDays + dlqDays,
		"([0-9]+) days in the queue plus up to [0-9]+":                      queueDays,
		"days in the queue plus up to ([0-9]+)":                             bound("DeadLetterRetentionSeconds", "MaxValue") / daySeconds,
		"at most ([0-9]+) characters quoted":                                memory.MaxEvidenceChars,
		"thread IDs of up to ([0-9]+) characters":                           memory.ThreadKeyLen,
		"the extractor failed ([0-9]+) times":                               app.Queues["ExtractionQueue"].MaxReceiveCount,
		"the first ([0-9]+) bits of the SHA-256":                            len(logref.User("t", "u")) * 4,
	})
}

// TestBenchmarksCountTheMalformedAnswers holds the number of
// malformed-answer cases BENCHMARKS.md gives to the cases of
// bedrock.TestMalformedAnswers, counted in its source: the elements of
// its table of tests.
func TestBenchmarksCountTheMalformedAnswers(t *testing.T) {
	root := httpapitest.Root(t)
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "bedrock", "bedrock_test.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := -1
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "TestMalformedAnswers" {
			cases = tableLen(fn.Body)
		}
	}
	if cases < 1 {
		t.Fatal("bedrock/bedrock_test.go: TestMalformedAnswers has no table of tests")
	}
	docblock.CheckFigures(t, filepath.Join(root, "BENCHMARKS.md"), docblock.Figures{
		"([0-9]+) malformed-answer cases through the real Bedrock client": cases,
	})
}

// tableLen returns the number of elements of the composite literal
// assigned to tests in body, or -1 when there is none.
func tableLen(body *ast.BlockStmt) int {
	n := -1
	ast.Inspect(body, func(node ast.Node) bool {
		as, ok := node.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == "tests" {
			if lit, ok := as.Rhs[0].(*ast.CompositeLit); ok && n < 0 {
				n = len(lit.Elts)
			}
		}
		return true
	})
	return n
}

// TestBenchmarksTargetsAreTheScripts holds the targets BENCHMARKS.md
// gives the fact API functions to the ones scripts/bench-api.sh prints
// beside its measures.
func TestBenchmarksTargetsAreTheScripts(t *testing.T) {
	docblock.CheckFigures(t, filepath.Join(httpapitest.Root(t), "BENCHMARKS.md"), docblock.Figures{
		"hello` [0-9.–]+ ms \\(median\\) \\| ≤ ([0-9.]+) \\|": benchTarget(t, startUpTarget),
		"ratio [0-9.–]+ \\(target ≤ ([0-9.]+)\\)":             benchTarget(t, `handler/GetItem ratio .* \(target ≤ ([0-9.]+)\)`),
	})
}

// startUpTarget matches the start-up target scripts/bench-api.sh prints.
const startUpTarget = `before any AWS call \(target ≤ ([0-9.]+)\)`

// benchTarget returns the target scripts/bench-api.sh prints where
// pattern's first group matches it.
func benchTarget(t *testing.T, pattern string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "scripts", "bench-api.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(pattern).FindSubmatch(script)
	if m == nil {
		t.Fatalf("scripts/bench-api.sh prints no target matching %q", pattern)
	}
	return string(m[1])
}

// TestExtractorDocTemplateFigures holds the figures docs/extractor.md
// takes from template.yaml (its constants are held by the extractor's
// TestExtractorDocFigures): the extractor's timeout, event and queue, the
// caps' bounds, the alarms, PENDING_DAYS and the queues' names.
func TestExtractorDocTemplateFigures(t *testing.T) {
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	params := asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])
	bound := func(name, key string) any { return asMap(params[name])[key] }
	fn := app.Functions["ExtractorFunction"]
	q, dlq := app.Queues["ExtractionQueue"], app.Queues["ExtractionDeadLetterQueue"]
	var batch int
	for _, ev := range app.SQSEvents {
		if ev.Function == "ExtractorFunction" {
			batch = ev.BatchSize
		}
	}
	alarm := func(id, key string) int { return toInt(t, app.Properties[id][key]) }
	checkFigures(t, "extractor.md", docblock.Figures{
		"`Timeout` is ([0-9]+) s":                                        int(fn.Timeout / time.Second),
		"`MaxFacts` \\(at most ([0-9]+)\\) and":                          bound("MaxFacts", "MaxValue"),
		"`MaxFactChars` \\(at most ([0-9]+)\\): every pair":              bound("MaxFactChars", "MaxValue"),
		"full record could pass ([0-9]+) KB":                             memory.ItemBudget / 1024,
		"`BatchSize` up to ([0-9]+)":                                     batch,
		"`VisibilityTimeout` to at least ([0-9]+) ×":                     int(q.VisibilityTimeout / fn.Timeout),
		"stay under the fence's ([0-9]+) days":                           fn.Env[setup.EnvFenceDays],
		"FIFO DLQ with `maxReceiveCount` ([0-9]+)":                       q.MaxReceiveCount,
		"\\(([0-9]+) and [0-9]+ characters\\): CloudFormation's":         len(q.Name),
		"\\([0-9]+ and ([0-9]+) characters\\): CloudFormation's":         len(dlq.Name),
		"\\| `PENDING_DAYS` \\| `PendingDays` \\| ([0-9]+) to":           bound("PendingDays", "MinValue"),
		"\\| `PendingDays` \\| [0-9]+ to ([0-9]+) \\|":                   bound("PendingDays", "MaxValue"),
		"\\| `PendingDays` \\| [0-9]+ to [0-9]+ \\| ([0-9]+) \\|":        app.Parameters["PendingDays"],
		"`ExtractorModelFailedAlarm` .* any in ([0-9]+) minutes: access": alarm("ExtractorModelFailedAlarm", "Period") / 60,
		"more than ([0-9]+) in [0-9]+ minutes: the model's answers":      alarm("ExtractorBadAnswerAlarm", "Threshold"),
		"more than [0-9]+ in ([0-9]+) minutes: the model's answers":      alarm("ExtractorBadAnswerAlarm", "Period") / 60,
		"any in ([0-9]+) minutes: a gateway sends":                       alarm("ExtractorMalformedAlarm", "Period") / 60,
		"any in ([0-9]+) minutes: a tenant's daily budget":               alarm("ExtractorRefusedAlarm", "Period") / 60,
		"over `UnsupportedAlarmPercent` \\(([0-9]+) %\\)":                app.Parameters["UnsupportedAlarmPercent"],
		"of the facts proposed in an hour, at least ([0-9]+),":           alarmLeast(t, app, "ExtractorUnsupportedAlarm"),
		"\\(([0-9]+) is suggested\\)":                                    q.MaxReceiveCount,
		"Counts are integers in \\[0, 2([⁰¹²³⁴⁵⁶⁷⁸⁹]+)−1\\]":             superscript(countBits(t)),
	})
}

// countBits returns n where every count of the extraction message's
// schema is at most 2ⁿ−1.
func countBits(t *testing.T) int {
	t.Helper()
	ms := regexp.MustCompile(`"maximum": ([0-9]+)`).FindAllSubmatch(schema.ExtractionMessageV1(), -1)
	if len(ms) == 0 {
		t.Fatal("the extraction message's schema sets no maximum")
	}
	exp := 0
	for _, m := range ms {
		n, err := strconv.ParseUint(string(m[1]), 10, 64)
		if err != nil || n&(n+1) != 0 || (exp != 0 && n != 1<<exp-1) {
			t.Fatalf("the schema's maximum %s is not 2ⁿ−1 like the others", m[1])
		}
		exp = bits.Len64(n)
	}
	return exp
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
// gives its pending fact; and the references the document shows to
// functions/logref.
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
	ref := logref.User("acme", "u-123")
	checkFigures(t, "api.md", docblock.Figures{
		"the first ([0-9]+) hex digits of SHA-256":       len(ref),
		"sha256sum \\| cut -c1-([0-9]+)`":                len(ref),
		`action = "erase" and targetRef = "([0-9a-f]+)"`: ref,
	})
}

// TestExtractorDocListsTheGeographies holds the Regions docs/extractor.md
// lists for each inference-profile prefix to template.yaml's mapping
// InferenceGeography, and the SQS group ID limit it states to the length
// past which schema.GroupID hashes.
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
	n := 1
	for !strings.HasPrefix(schema.GroupID(strings.Repeat("t", n), "u"), "sha256:") {
		n++
	}
	want := "mapping `InferenceGeography` (" + strings.Join(groups, "; ") + ")"
	raw, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "extractor.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(raw)), " "), want) {
		t.Errorf("docs/extractor.md does not say %q", want)
	}
	checkFigures(t, "extractor.md", docblock.Figures{
		"over SQS's ([0-9]+)-character limit": len(strings.Repeat("t", n-1) + "/u"),
	})
}
