package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/memory"
)

// TestDocsAreGenerated measures again, at the default profile, and holds
// docs/cost.md and docs/scale.md to what it computes: the text between
// their markers must be the command's output.
func TestDocsAreGenerated(t *testing.T) {
	endpoint := motoserver.Endpoint(t)
	root := filepath.Join("..", "..")
	docs, limits, err := render(context.Background(), endpoint, defaultProfile(), root)
	if err != nil {
		t.Fatal(err)
	}
	templateSaysWhereItBinds(t, root, limits)
	for name, want := range docs {
		b, err := os.ReadFile(filepath.Join(root, "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := generated(string(b))
		if !ok {
			t.Errorf("docs/%s has no markers %q … %q", name, beginGenerated, endGenerated)
			continue
		}
		if got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			for i := range max(len(gl), len(wl)) {
				g, w := at(gl, i), at(wl, i)
				if g != w {
					t.Errorf("docs/%s differs from the computation at line %d of its generated part:\n doc: %s\n now: %s\nrun: ./scripts/with-moto.sh go run ./scripts/cost -write .", name, i+1, g, w)
					break
				}
			}
		}
	}
}

// TestProseFigures holds the figures docs/scale.md, docs/runbook.md and
// docs/cost.md write in their prose, outside the generated part, to the
// same computation at the default profile: the reads a second and the
// extractor concurrency at a million daily users, the model calls a
// minute, the calls a day of one user, and the long message the producer
// trims.
func TestProseFigures(t *testing.T) {
	endpoint := motoserver.Endpoint(t)
	p := defaultProfile()
	var u perUser
	var perDay, longBefore, longAfter int
	var m month
	var ac, m0 float64
	err := measure(context.Background(), endpoint, p, func(_ memory.Config, r reportInput) {
		u, perDay = peakPerUser(p, r), r.extractionsPerDay+int(idleDayOf(p.idleReadSeconds, r).reads)
		longBefore, longAfter = r.longBefore, r.longAfter
		m = priceMonth(p, r)
		_, _, ac, m0 = elsewhere(p, r, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	const million = 1e6
	root := filepath.Join("..", "..", "docs")
	docblock.CheckFigures(t, filepath.Join(root, "scale.md"), docblock.Figures{
		"makes about ([0-9,]+) reads/s at peak at 1 million":      round2(million * u.reads),
		"raise it to about ([0-9,]+) \\(the extractions a second": round2(million * u.extractions * dueSeconds),
		"at peak, at ([0-9]+) s each\\)":                          dueSeconds,
		"quota \\(about ([0-9,]+) calls a minute":                 round2(million * u.calls() * 60),
		"\\(about ([0-9]+) calls a day per active user\\)":        perDay,
	})
	docblock.CheckFigures(t, filepath.Join(root, "runbook.md"), docblock.Figures{
		"about ([0-9]+) a day per active user": perDay,
	})
	docblock.CheckFigures(t, filepath.Join(root, "cost.md"), docblock.Figures{
		"`TRANSCRIPT_CHARS` \\(([0-9,]+)\\) characters":         memory.DefaultTranscriptChars,
		"([a-z]+) turns of [0-9,]+ characters went as":          docblock.InWords(longTurns),
		"turns of ([0-9,]+) characters went as":                 longTurnChars,
		"went as ([0-9,]+) bytes":                               longBefore,
		"went as [0-9,]+ bytes \\(([0-9]+) SQS chunks":          units(longBefore, sqsChunkBytes),
		"now go as ([0-9,]+) bytes":                             longAfter,
		"now go as [0-9,]+ bytes \\(([0-9]+) chunk\\)":          units(longAfter, sqsChunkBytes),
		"\\*\\*The model is ([a-z ]+) of the bill":              fraction(modelShare(m)),
		"costs about ([a-z0-9]+) cents per active user a month": docblock.InWords(int(math.Round(100 * m.total))),
		"AgentCore Memory about ([a-z0-9]+) times more":         docblock.InWords(int(math.Round(ac / m.total))),
		"retrievals a month serve, about \\$([0-9]+)":           int(math.Round(m0)),
		"shared by as many users as its ([0-9,]+) retrievals":   mem0ProRetrievals,
	})
	docblock.CheckFigures(t, filepath.Join("..", "..", "BENCHMARKS.md"), docblock.Figures{
		"a few ([a-z ]+) per active user a month for [0-9]+ answers": magnitude(m.total),
		"per active user a month for ([0-9]+) answers a day":         p.answersPerDay,
		"against ([a-z ]+) \\(AgentCore Memory\\)":                   magnitude(ac),
		"and ([a-z ]+) \\(mem0 Pro\\) for the same use":              magnitude(m0),
	})
}

// modelShare returns the share of the month m that the model's tokens
// cost.
func modelShare(m month) float64 {
	model := 0.0
	for _, l := range m.lines {
		if strings.HasPrefix(l.part, "Bedrock") {
			model += l.cost
		}
	}
	return model / m.total
}

// fraction writes a share as the docs do: the nearest of a few simple
// fractions.
func fraction(x float64) string {
	names := []string{"a quarter", "a third", "half", "two thirds", "three quarters", "four fifths", "nine tenths"}
	values := []float64{1. / 4, 1. / 3, 1. / 2, 2. / 3, 3. / 4, 4. / 5, 9. / 10}
	best := 0
	for i, v := range values {
		if math.Abs(v-x) < math.Abs(values[best]-x) {
			best = i
		}
	}
	return names[best]
}

// magnitude writes an amount in dollars as BENCHMARKS.md compares them:
// cents, tenths of a dollar or dollars.
func magnitude(usd float64) string {
	switch {
	case usd < 0.1:
		return "cents"
	case usd < 1:
		return "tenths of a dollar"
	}
	return "dollars"
}

// bindsAt reads "about N daily users" or "about N million daily users".
var bindsAt = regexp.MustCompile(`about ([0-9][0-9,.]*)( million)? daily users`)

// templateSaysWhereItBinds holds template.yaml's parameter descriptions
// to the computation: a limit a parameter sets that binds below a million
// daily users says at how many, within 5 %, and a figure it gives is the
// computed one.
func templateSaysWhereItBinds(t *testing.T, root string, limits []limit) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := samtemplate.Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := raw["Parameters"].(map[string]any)
	for _, l := range limits {
		if l.param == "" {
			continue
		}
		p, _ := params[l.param].(map[string]any)
		desc := strings.Join(strings.Fields(fmt.Sprint(p["Description"])), " ")
		m := bindsAt.FindStringSubmatch(desc)
		if m == nil {
			if l.us < 1e6 {
				t.Errorf("template.yaml: %s binds at %.0f daily users, and its description does not say so (\"about N daily users\"): %q", l.param, l.us, desc)
			}
			continue
		}
		n, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if m[2] != "" {
			n *= 1e6
		}
		if math.Abs(n-l.us) > 0.05*l.us {
			t.Errorf("template.yaml: %s says it binds at about %s%s daily users; computed %.0f", l.param, m[1], m[2], l.us)
		}
	}
}

func at(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return "(nothing)"
}

// TestReplaceGenerated checks that what replaceGenerated writes,
// generated reads back, and that a doc without markers is refused.
func TestReplaceGenerated(t *testing.T) {
	doc := "# T\n\n" + beginGenerated + "\n\nold\n" + endGenerated + "\n\nafter\n"
	out, err := replaceGenerated(doc, "new\ntable\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := generated(out); !ok || got != "new\ntable\n" {
		t.Errorf("generated(%q) = %q, %v; want the new text", out, got, ok)
	}
	if !strings.HasSuffix(out, endGenerated+"\n\nafter\n") || !strings.HasPrefix(out, "# T\n\n"+beginGenerated) {
		t.Errorf("the text around the markers changed: %q", out)
	}
	if _, err := replaceGenerated("# no markers\n", "x"); err == nil {
		t.Error("a doc without markers was accepted")
	}
}

// TestHuman checks the two significant digits of the tables.
func TestHuman(t *testing.T) {
	for n, want := range map[float64]string{5.6000001: "5.6", 56: "56", 555.6: "560", 22_600: "23 k", 1_800_000: "1.8 M", 0: "0", 2_700: "2700"} {
		if got := human(n); got != want {
			t.Errorf("human(%v) = %q, want %q", n, got, want)
		}
	}
}

// TestMetricNamesAreTheExtractors holds the metric names the stack's cost
// counts to those of the extractor's embedded-metric line.
func TestMetricNamesAreTheExtractors(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "functions", "extractor", "observe.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`\{"([A-Za-z]+)", "(?:Count|Milliseconds)", `).FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	want := append(slices.Clone(extractorMetricNames), extractorCountNames...)
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("functions/extractor writes the metrics %v; scripts/cost counts %v", names, want)
	}
}

// TestCostDocFigures holds the profile, the prices and the assumptions
// docs/cost.md writes outside its generated part to the command's default
// profile and constants.
func TestCostDocFigures(t *testing.T) {
	p := defaultProfile()
	if apiSeconds != notDueSeconds {
		t.Error("docs/cost.md gives one duration for a fact API invocation and an extractor's that calls no model; the constants differ")
	}
	usd := func(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
	docblock.CheckFigures(t, filepath.Join("..", "..", "docs", "cost.md"), docblock.Figures{
		"## The profile ([0-9]+) answers a day":                      p.answersPerDay,
		"answers a day spread over ([0-9]+) threads":                 p.threadsPerDay,
		"\\(so ([0-9]+) answers, [0-9]+ turns, per thread\\)":        p.answersPerDay / p.threadsPerDay,
		"\\(so [0-9]+ answers, ([0-9]+) turns, per thread\\)":        2 * p.answersPerDay / p.threadsPerDay,
		"a user turn of ([0-9,]+) characters":                        p.userChars,
		"an assistant turn of ([0-9,]+), `ExtractEveryTurns`":        p.assistantChars,
		"`ExtractEveryTurns` ([0-9]+) \\(the default\\)":             memory.DefaultExtractEveryTurns,
		"\\(the default\\), ([0-9]+) facts, one":                     p.facts,
		"A month is ([0-9]+) days":                                   p.days,
		"holds `MaxThreads` \\(([0-9]+)\\) thread watermarks":        memory.DefaultMaxThreads,
		"\\| Lambda requests \\| \\$([0-9.]+) per million":           usd(lambdaPerRequest*1e6, 2),
		"\\| Lambda duration, arm64 \\| \\$([0-9.]+) per GB-second":  usd(lambdaArmPerGBs, 10),
		"\\| API Gateway HTTP API \\| \\$([0-9.]+) per million":      usd(apiPerRequest*1e6, 2),
		"\\| DynamoDB on-demand writes \\| \\$([0-9.]+) per million": usd(dynamoPerWRU*1e6, 3),
		"\\| DynamoDB on-demand reads \\| \\$([0-9.]+) per million":  usd(dynamoPerRRU*1e6, 3),
		"\\| DynamoDB storage \\| \\$([0-9.]+) per GB-month":         usd(dynamoPerGBMonth, 2),
		"\\| SQS FIFO \\| \\$([0-9.]+) per million":                  usd(sqsFIFOPerRequest*1e6, 2),
		"every ([0-9]+) KB chunk of a payload is billed":             sqsChunkBytes / 1024,
		"\\(billed by the body's ([0-9]+) KB chunks\\)":              sqsChunkBytes / 1024,
		"a strongly consistent read of up to ([0-9]+) KB is one":     readUnitBytes / 1024,
		"Nova Micro \\| \\$([0-9.]+) per million input":              usd(novaMicroPerIn*1e6, 3),
		"input tokens, \\$([0-9.]+) per million output":              usd(novaMicroPerOut*1e6, 2),
		"\\| CloudWatch Logs \\| \\$([0-9.]+) per GB ingested":       usd(logsPerGB, 2),
		"alarms \\| \\$([0-9.]+) per metric-month":                   usd(metricPerMonth, 2),
		"per metric-month, \\$([0-9.]+) per alarm metric-month":      usd(alarmMetricPerMonth, 2),
		"short-term: \\$([0-9.]+) per GB ingested":                   usd(agentCorePerGB, 0),
		"each event billed for at least ([0-9]+) KB":                 agentCoreMinEvent / 1024,
		"long-term: \\$([0-9.]+) per 1,000 records":                  usd(agentCorePerRecord*1000, 2),
		"\\$([0-9.]+) per 1,000 retrievals":                          usd(agentCorePerRetrieve*1000, 2),
		"Pro \\$([0-9]+) a month":                                    mem0ProMonthly,
		"unlimited memories, ([0-9,]+) retrievals\\)":                mem0ProRetrievals,
		"takes ([0-9]+) characters a token":                          charsPerToken,
		"one `SET` plus ([0-9]+) tokens for the tool":                toolCallOverheadTokens,
		"\\*\\*Durations.\\*\\* ([0-9]+) ms for a warm fact API":     apiSeconds * 1000,
		"no model; ([0-9]+) s for one that does":                     dueSeconds,
		"Memory is the template's ([0-9]+) MB":                       memoryMB,
		"\\*\\*Logs.\\*\\* ([0-9]+) bytes per fact API":              apiLogBytes,
		"line\\), ([0-9]+) per extractor invocation":                 extractorLogBytes,
		"plus about ([0-9]+) for the record's":                       emfLineBytes,
		"thread IDs are UUIDs, ([0-9]+) characters":                  len(threadID(0)),
		"With ([0-9]+)-character thread IDs":                         len(threadID(0)),
		"thread IDs, the ([0-9]+) watermarks `MaxThreads` keeps":     memory.DefaultMaxThreads,
		"when it is at most ([0-9]+) bytes, else":                    memory.ThreadKeyLen,
		"else `#` and ([0-9]+) bits of its SHA-256":                  6 * (memory.ThreadKeyLen - 1),
		"bits of its SHA-256 \\(([0-9]+) bytes\\)":                   memory.ThreadKeyLen,
		"the reasons to keep ([0-9]+) watermarks":                    memory.DefaultMaxThreads,
		"the default stays ([0-9]+) \\(docs/decisions.md":            memory.DefaultMaxThreads,
	})
}

// TestQuotasInProse holds the AWS quotas docs/runbook.md and
// docs/scale.md's prose name to the quota table scripts/cost writes into
// docs/scale.md (with its sources and the date they were read).
func TestQuotasInProse(t *testing.T) {
	docs := filepath.Join("..", "..", "docs")
	docblock.CheckFigures(t, filepath.Join(docs, "runbook.md"), docblock.Figures{
		"past ([0-9,]+) see docs/scale.md's N-queue":           eventSourceMax.us,
		"within the account's ([0-9,]+) requests/s":            apiAccount.us,
		"first burst \\(([0-9,]+) writes/s\\)":                 tableFirstWrites.us,
		"the table's quota \\(([0-9,]+) units/s by default\\)": tableQuota.us,
		"quota increase past ([0-9,]+) units/s":                tableQuota.us,
	})
	docblock.CheckFigures(t, filepath.Join(docs, "scale.md"), docblock.Figures{
		"One SQS event source takes at most ([0-9,]+) concurrent": eventSourceMax.us,
		"at about ([0-9]+) s an extraction, [0-9,]+ extractions":  dueSeconds,
		"an extraction, ([0-9,]+) extractions a second":           eventSourceMax.us / dueSeconds,
		"Beyond ([0-9,]+) concurrent extractions":                 eventSourceMax.us,
	})
}
