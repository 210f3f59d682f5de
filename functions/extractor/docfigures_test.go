package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
	"github.com/usermemory/usermemory/schema"
)

// TestExtractorDocFigures holds the limits, retries, margins and sizes
// docs/extractor.md writes in its prose to the constants of the
// extractor, bedrock, memory, producer and schema, and to the published
// JSON Schema (the template's figures of the same document are held by
// the functions package's TestExtractorDocTemplateFigures).
func TestExtractorDocFigures(t *testing.T) {
	msg := messageSchema(t)
	sec := func(d time.Duration) int { return int(d / time.Second) }
	docblock.CheckFigures(t, filepath.Join("..", "..", "docs", "extractor.md"), docblock.Figures{
		"IDs follow `\\$defs/id` \\(1–([0-9]+) of":                        memory.MaxIDLen,
		"`cheapModelId` is at most ([0-9]+) characters":                   msg.cheapModelChars,
		"`turns` holds at most ([0-9,]+) items":                           msg.turns,
		"holds at most ([0-9,]+) items of the same turn definition":       msg.contextTurns,
		"`threadTitle` \\(1 to ([0-9]+) characters":                       msg.titleChars,
		"Two IDs of up to ([0-9]+) bytes":                                 memory.MaxIDLen,
		"\\(([0-9]+) characters, each part ended by a NUL byte":           len(producer.DeduplicationID("t", "u", "th", 1)),
		"must fit in ([0-9]+) KiB \\(`DefaultMaxBytes`":                   producer.DefaultMaxBytes / 1024,
		"Only the newest ([0-9,]+) turns are kept":                        producer.MaxTurns,
		"a body over ([0-9]+) KiB is `oversized`":                         schema.MaxMessageBytes / 1024,
		"group mismatch / over ([0-9]+) KiB":                              schema.MaxMessageBytes / 1024,
		"`evidence` \\(at most ([0-9]+) characters":                       memory.MaxEvidenceChars,
		"one sentence, at most ([0-9]+) characters\\)":                    memory.MaxEvidenceChars,
		"A quote of fewer than ([0-9]+) letters or digits":                fewestEvidenceChars(t),
		"`memory.MaxValidUntilDays`, ([0-9]+)\\)":                         memory.MaxValidUntilDays,
		"while `ApproximateReceiveCount < ([0-9]+)`":                      DefaultMaxModelReceives,
		"less than ([0-9]+) s left in the invocation":                     sec(DefaultSafetyMargin),
		"at most ([0-9]+) attempts \\(`bedrock.DefaultMaxAttempts`\\)":    bedrock.DefaultMaxAttempts,
		"full-jitter backoff from ([0-9]+) ms":                            int(bedrock.DefaultBaseDelay / time.Millisecond),
		"after throttling\\) up to ([0-9]+) s":                            sec(bedrock.DefaultMaxDelay),
		"\\(default ([0-9]+) s, `setup.DefaultModelAttemptSecs`":          setup.DefaultModelAttemptSecs,
		"`setup.DefaultModelAttemptSecs`; an answer of at most ([0-9,]+)": bedrock.MaxTokensUpperBound,
		"less than ([0-9]+) s \\(`bedrock.DefaultDeadlineMargin`\\)":      sec(bedrock.DefaultDeadlineMargin),
		"`DefaultMaxModelReceives` = ([0-9]+) receives":                   DefaultMaxModelReceives,
		"`maxReceiveCount` above ([0-9]+) \\(":                            DefaultMaxModelReceives,
		"`DefaultSafetyMargin` = ([0-9]+) s":                              sec(DefaultSafetyMargin),
		"that have under ([0-9]+) s left are reported":                    sec(DefaultSafetyMargin),
		"the safety margin is ([0-9]+) s":                                 sec(DefaultSafetyMargin),
		"one attempt at most ([0-9]+) s":                                  setup.DefaultModelAttemptSecs,
		"above the extractor's ([0-9]+) model receives":                   DefaultMaxModelReceives,
		"the first ([0-9]+) hex digits of SHA-256":                        len(logref.User("t", "u")),
		"sha256sum \\| cut -c1-([0-9]+)`":                                 len(logref.User("t", "u")),
		"the ([0-9]+) pending facts with a thread title":                  memory.DefaultMaxPending,
		"with a thread title of ([0-9]+) characters":                      memory.MaxThreadTitleChars,
		"characters and evidence of ([0-9]+), all of":                     memory.MaxEvidenceChars,
	})
	if bedrock.DefaultAttemptTimeout != setup.DefaultModelAttemptSecs*time.Second {
		t.Errorf("bedrock.DefaultAttemptTimeout %v and setup.DefaultModelAttemptSecs %d s differ: docs/extractor.md names one figure for both",
			bedrock.DefaultAttemptTimeout, setup.DefaultModelAttemptSecs)
	}
}

// messageLimits are the bounds the published extraction message schema
// sets on what docs/extractor.md states.
type messageLimits struct {
	turns, contextTurns, titleChars, cheapModelChars int
}

// messageSchema reads the bounds of schema.ExtractionMessageV1.
func messageSchema(t *testing.T) messageLimits {
	t.Helper()
	var s struct {
		Properties struct {
			Turns        struct{ MaxItems int }
			ContextTurns struct{ MaxItems int }
			ThreadTitle  struct{ MaxLength int }
			CheapModelID struct{ Pattern string } `json:"cheapModelId"`
		}
	}
	if err := json.Unmarshal(schema.ExtractionMessageV1(), &s); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\{1,([0-9]+)\}\$$`).FindStringSubmatch(s.Properties.CheapModelID.Pattern)
	if m == nil {
		t.Fatalf("cheapModelId's pattern %q has no {1,N} bound", s.Properties.CheapModelID.Pattern)
	}
	n, _ := strconv.Atoi(m[1])
	p := s.Properties
	return messageLimits{p.Turns.MaxItems, p.ContextTurns.MaxItems, p.ThreadTitle.MaxLength, n}
}

// fewestEvidenceChars returns the fewest letters a quote needs for
// memory.EvidenceFound to find it in a user turn that says exactly it.
func fewestEvidenceChars(t *testing.T) int {
	t.Helper()
	for n := 1; n <= memory.MaxEvidenceChars; n++ {
		quote := strings.Repeat("a", n)
		if memory.EvidenceFound(quote, []memory.Turn{{Role: memory.RoleUser, Text: quote}}) {
			return n
		}
	}
	t.Fatal("memory.EvidenceFound finds no quote of letters up to MaxEvidenceChars")
	return 0
}

// TestExtractorDocDescribesTheFigures holds the description of the
// figure tests in docs/extractor.md ("Figures") to their constants and to
// the Makefile's run of BenchmarkServiceOverhead.
func TestExtractorDocDescribesTheFigures(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`-bench ServiceOverhead -benchtime ([0-9]+)x`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile runs BenchmarkServiceOverhead no fixed number of times")
	}
	ordinals := []string{"", "", "second", "third", "fourth", "fifth", "sixth", "seventh"}
	docblock.CheckFigures(t, filepath.Join("..", "..", "docs", "extractor.md"), docblock.Figures{
		"with 1–([0-9]+) turns per call":                            maxTurnsPerMessage,
		"and every ([a-z]+) message is delivered twice":             ordinals[redeliverEvery],
		"sends a seeded ([0-9,]+)-turn thread":                      promptThreadTurns,
		"pastes up to ([0-9,]+) characters":                         userBands[len(userBands)-1].hi,
		"`BenchmarkServiceOverhead` makes ([0-9]+) due":             string(m[1]),
		"The record's deadline is the invocation's less ([0-9]+) s": int(finishReserve / time.Second),
		"the invocation's deadline minus ([0-9]+) s":                int(finishReserve / time.Second),
		"\\(`setup.DynamoDBAttemptTimeout`, ([0-9]+) s\\)":          int(setup.DynamoDBAttemptTimeout / time.Second),
		"it stops at ([0-9,]+), is asked for again":                 bedrock.FirstMaxTokens,
		"down from 2 × `MaxFacts` \\(([0-9]+)\\)":                   2 * memory.DefaultMaxFacts,
		"\\(extractEveryTurns ([0-9]+): three user turns":           memory.DefaultExtractEveryTurns,
	})
}

// TestExtractorDocCountsTheMetrics holds the metric counts of
// docs/extractor.md ("Metrics") to the directives of a record's EMF line,
// and the step MaxTokensFor rounds to, read from its answers.
func TestExtractorDocCountsTheMetrics(t *testing.T) {
	byOutcome, byKind := recordMetrics(result{}, 0)
	step := 0
	for n := 1; n < 4*bedrock.MaxTokensUpperBound; n += 7 {
		step = gcd(step, int(bedrock.MaxTokensFor(n)))
	}
	docblock.CheckFigures(t, filepath.Join("..", "..", "docs", "extractor.md"), docblock.Figures{
		"would make ([0-9]+) metrics × outcomes × tenants":      len(byOutcome),
		"screening counts per outcome ([0-9]+) × outcomes more": len(byKind),
		"these make ([0-9]+) × outcomes \\+ [0-9]+":             len(byOutcome),
		"these make [0-9]+ × outcomes \\+ ([0-9]+)":             len(byKind),
		"\\(10 %\\), rounded up to ([0-9]+), at most":           step,
		"plus the answer at ([0-9]+) bytes a token":             bedrock.BytesPerToken,
		"At ([0-9]+) bytes a token the measure":                 bedrock.BytesPerToken,
		"`bedrock.FirstMaxTokens` \\(([0-9,]+), so that":        bedrock.FirstMaxTokens,
	})
}

// gcd returns the greatest common divisor of a and b.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
