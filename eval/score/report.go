package score

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
)

// Run describes what a report measured, so that two reports compare.
type Run struct {
	// Backend is "stand-in" (the Converse stand-in's rule-based
	// extraction, not a model) or "bedrock".
	Backend string `json:"backend"`
	ModelID string `json:"modelId"`
	Region  string `json:"region,omitempty"`
	// OutputMode is the bedrock output mode, tool or json.
	OutputMode string `json:"outputMode"`
	// Prompt names the MEMORY_USER prompt ("default" or the file
	// given) and PromptSHA256 is the hex SHA-256 of its text (their JSON
	// names are the former "template" ones, so that older reports replay).
	Prompt            string    `json:"template"`
	PromptSHA256      string    `json:"templateSha256"`
	ExtractEveryTurns int       `json:"extractEveryTurns"`
	StartedAt         time.Time `json:"startedAt"`
	// Replayed is true when the scores come from a replay of the calls
	// recorded in an earlier report of this run, with no model call.
	Replayed bool `json:"replayed,omitempty"`
}

// BackendStandIn and BackendBedrock are the values of Run.Backend.
const (
	BackendStandIn = "stand-in"
	BackendBedrock = "bedrock"
)

// Report is the result of a run: what ran, the totals, the baselines,
// by what each conversation covers, and each conversation.
type Report struct {
	// Label says whose figures these are (see [Report.Label]).
	Label     string     `json:"label"`
	Run       Run        `json:"run"`
	Totals    Totals     `json:"totals"`
	Baselines []Baseline `json:"baselines"`
	// ByCover are the totals by what the conversations cover, without
	// intervals.
	ByCover       map[string]Totals `json:"byCover"`
	Conversations []Conversation    `json:"conversations"`
	// Judge is what a second model made of the wrong values, apart from
	// the rule-based scores; nil without -judge.
	Judge *JudgeSummary `json:"judge,omitempty"`
	// Imports are the scores of the gold import cases, apart from the
	// conversations' (see [Import]); ImportTotals sums them. Both are
	// empty when the run scored no import case (a replay).
	Imports      []Import      `json:"imports,omitempty"`
	ImportTotals *ImportTotals `json:"importTotals,omitempty"`
}

// SetImports adds the scores of the import cases to r, with their
// totals.
func (r *Report) SetImports(imports []Import) {
	r.Imports = imports
	if len(imports) > 0 {
		t := SumImports(imports)
		r.ImportTotals = &t
	}
}

// NewReport sums scores, the scores of the conversations convs of a run,
// into a report of run, with the baselines of convs.
func NewReport(run Run, convs []gold.Conversation, scores []Conversation) Report {
	r := Report{Run: run, Totals: Sum(scores), Baselines: Baselines(convs), ByCover: map[string]Totals{}, Conversations: scores}
	r.Label = labelOf(run)
	groups := map[string][]Conversation{}
	for _, c := range scores {
		for _, tag := range c.Covers {
			groups[tag] = append(groups[tag], c)
		}
	}
	for tag, cs := range groups {
		r.ByCover[tag] = sum(cs)
	}
	return r
}

// labelOf says whose figures a run gives, for the report's Label and every
// table's title.
func labelOf(run Run) string {
	if run.Backend == BackendStandIn {
		return "the Converse stand-in's rule-based extraction (not a model)"
	}
	return fmt.Sprintf("Bedrock model %s", run.ModelID)
}

// Markdown writes r as Markdown tables: the run, the totals, the figures by
// what the conversations cover, and one row per conversation.
func (r Report) Markdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Memory evaluation: %s\n\n", labelOf(r.Run))
	if r.Run.Backend == BackendStandIn {
		p("> These figures come from the stand-in's fixed rules, which understand a few English phrasings; its tokens are the request's bytes / 4 and its latency is a local loopback call. They show that the harness runs and scores; they say nothing of a model.\n\n")
	}
	region := ""
	if r.Run.Region != "" {
		region = ", region " + r.Run.Region
	}
	p("Model ID `%s`%s, output mode %s, prompt %s (sha256 %s), extractEveryTurns %d, %d conversations.\n\n",
		r.Run.ModelID, region, r.Run.OutputMode, r.Run.Prompt, short(r.Run.PromptSHA256), r.Run.ExtractEveryTurns, r.Totals.Conversations)

	b.WriteString(r.Headline())
	b.WriteString(figures(r.Totals))

	p("### By what the conversations cover\n\n")
	p("| covers | conversations | F1 | precision | recall | contradictions | forbidden kept | wrong language | unsupported / SETs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	tags := make([]string, 0, len(r.ByCover))
	for tag := range r.ByCover {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	for _, tag := range tags {
		x := r.ByCover[tag]
		p("| %s | %d | %s | %s | %s | %d | %d/%d | %d | %d/%d |\n", tag, x.Conversations, f3(x.F1), f3(x.Precision), f3(x.Recall), x.Contradictions, x.LeakTotal(), sumOf(x.Opportunities), x.WrongLanguage, x.Unsupported, x.Sets)
	}

	p("\n### By conversation\n\n")
	p("| conversation | lang | F1 | precision | recall | contradictions | forbidden kept | wrong language | unsupported / SETs | calls | tokens in/out | missing | not right |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, c := range r.Conversations {
		in, out := 0, 0
		for _, call := range c.Calls {
			in += call.InputTokens
			out += call.OutputTokens
		}
		p("| %s | %s | %s | %s | %s | %d | %s | %d | %d/%d | %d | %d/%d | %s | %s |\n", c.ID, c.Language, f3(c.F1), f3(c.Precision), f3(c.Recall),
			c.Contradictions, forbiddenCell(c), c.WrongLanguage, c.Unsupported, c.Sets, len(c.Calls), in, out, cell(c.Missing), cell(notRight(c)))
	}
	b.WriteString(r.judgeMarkdown())
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return ImportsMarkdown(w, r.Imports)
}

// figures returns the table of every figure of a run's totals t.
func figures(t Totals) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n| figure | value |\n|---|---|\n")
	p("| F1 (2 × correct / (kept + expected)) | %s (2×%d/(%d+%d)) |\n", f3(t.F1), t.Satisfied, t.Kept, t.Expected)
	p("| precision (correct facts / facts kept) | %s (%d/%d) |\n", f3(t.Precision), t.Satisfied, t.Kept)
	p("| recall (expected facts kept / expected) | %s (%d/%d) |\n", f3(t.Recall), t.Satisfied, t.Expected)
	p("| perfect conversations | %d/%d |\n", t.Perfect, t.Conversations)
	p("| contradictions (subjects with two facts or more) | %d |\n", t.Contradictions)
	for _, c := range gold.Categories {
		p("| leak rate: %s (kept / forbidden) | %s (%d/%d) |\n", c, f3(t.LeakRate(c)), t.Leaked[c], t.Opportunities[c])
	}
	p("| values not in the user's language | %d |\n", t.WrongLanguage)
	p("| SETs answered / refused as unsupported (evidence not a user's words): the unsupported rate | %d / %d: %s |\n", t.Sets, t.Unsupported, f3(t.UnsupportedRate()))
	p("| SETs left out as secrets / left out as ended / sent to the pending facts | %d / %d / %d |\n", t.Secrets, t.Ended, t.PendingSets)
	p("| pending facts held at the end | %d |\n", t.PendingHeld)
	p("| kept quotes checked against the gold turns / not a span of a user turn | %d / %d |\n", t.QuotesChecked, t.BadQuotes)
	p("| messages sent / model calls / failed calls | %d / %d / %d |\n", t.Messages, t.ModelCalls, t.FailedCalls)
	p("| input / output tokens (total) | %d / %d |\n", t.InputTokens, t.OutputTokens)
	if t.ModelCalls > 0 {
		p("| input / output tokens per call | %d / %d |\n", t.InputTokens/t.ModelCalls, t.OutputTokens/t.ModelCalls)
	}
	if a := t.Answers; a.Fitted {
		p("| output tokens of an answer (least squares over %d answers) | %.1f + %.1f per operation; the largest %d, with %d operations |\n",
			a.Calls, a.PerAnswer, a.PerOperation, a.MaxTokens, a.MaxTokensOperations)
	}
	p("| latency per call p50 / p95 | %s / %s |\n", ms(t.LatencyP50), ms(t.LatencyP95))
	p("| turns never read by the beat (after the last due message) / after the idle read | %d / %d |\n", t.UnreadTurns, t.UnreadTurns-t.IdleReadTurns)
	p("| model calls of the idle read | %d |\n\n", t.IdleCalls)
	return b.String()
}

// Headline returns the report's headline as Markdown: F1 with its
// interval, the mean F1 per conversation and the leak rate, then a table
// of the run beside the three baselines and one of the leak rate by
// category. It holds no latency, so that two runs of the stand-in give
// the same headline.
func (r Report) Headline() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	t := r.Totals
	p("**F1 %s** (95 %% interval %s), mean F1 per conversation %s; leak rate %s (%s). ",
		f3(t.F1), interval(t.F1Interval), f3(t.MeanF1), f3(t.LeakRateAll), interval(t.LeakRateInterval))
	p("A memory is worth its margin over the baselines, which learn nothing from the conversations.\n\n")
	p("| memory | F1 | 95 %% interval | mean F1 | precision | recall | leak rate |\n|---|---:|---:|---:|---:|---:|---:|\n")
	p("| **%s** | **%s** | %s | %s | %s | %s | %s |\n", r.Label, f3(t.F1), interval(t.F1Interval), f3(t.MeanF1), f3(t.Precision), f3(t.Recall), f3(t.LeakRateAll))
	for _, bl := range r.Baselines {
		x := bl.Totals
		p("| baseline: %s (%s) | %s | %s | %s | %s | %s | %s |\n", bl.Name, bl.Keeps, f3(x.F1), interval(x.F1Interval), f3(x.MeanF1), f3(x.Precision), f3(x.Recall), f3(x.LeakRateAll))
	}
	p("\n| forbidden facts | %s |\n|---|%s\n", strings.Join(gold.Categories, " | "), strings.Repeat("---:|", len(gold.Categories)))
	p("| kept / forbidden (leak rate) |")
	for _, c := range gold.Categories {
		p(" %d/%d (%s) |", t.Leaked[c], t.Opportunities[c], f3(t.LeakRate(c)))
	}
	p("\n\n%s\n", t.SetsSentence())
	b.WriteString(t.BeatTable())
	p("\n%d conversations, %d messages, %d model calls, %d input and %d output tokens.\n", t.Conversations, t.Messages, t.ModelCalls, t.InputTokens, t.OutputTokens)
	return b.String()
}

// BeatTable returns, as Markdown, what the turns left unread cost: the
// run under the beat alone, as the user left each thread (production
// before the idle read), beside the run with the idle read (production
// now, the figures above it), and the idle read's extra model calls.
func (t Totals) BeatTable() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n| read | turns never read | conversations left with turns unread | expected facts missed | recall | model calls |\n|---|---:|---:|---:|---:|---:|\n")
	p("| the beat alone, as the user left (no read after the last due message) | %d | %d | %d/%d | %s | %d |\n",
		t.UnreadTurns, t.LeftUnread, t.Expected-t.BeatOnlySatisfied, t.Expected, f3(ratio(t.BeatOnlySatisfied, t.Expected)), t.ModelCalls-t.IdleCalls)
	p("| the beat and the idle read (production: the figures above) | %d | %d | %d/%d | %s | %d |\n",
		t.UnreadTurns-t.IdleReadTurns, t.UnreadAfterIdle, t.Expected-t.Satisfied, t.Expected, f3(t.Recall), t.ModelCalls)
	p("\nThe idle read made %d extra model calls over %d conversations, %s per conversation: one per conversation left with turns unread, none for the others.\n",
		t.IdleCalls, t.Conversations, f3(share(t.IdleCalls, t.Conversations)))
	return b.String()
}

// SetsSentence says what the store did with the SETs the model answered
// and how the quotes kept fared, as a sentence of the headline: the
// unsupported rate first, the figure to read on a model's first run.
func (c Counts) SetsSentence() string {
	return fmt.Sprintf("**Unsupported rate %s**: of %d SETs answered, %d were refused because their evidence is not the user's words; "+
		"%d held a secret and %d an end already past (left out), %d wait for the user's yes as pending facts. "+
		"Of %d quotes kept, %d are not a span of a user turn of their conversation (the harness's own check).",
		f3(c.UnsupportedRate()), c.Sets, c.Unsupported, c.Secrets, c.Ended, c.PendingSets, c.QuotesChecked, c.BadQuotes)
}

// notRight lists the kept facts that are not correct, allowed facts aside,
// and the quotes that are not a user's words.
func notRight(c Conversation) []string {
	out := slices.Clone(c.QuoteProblems)
	for _, f := range c.Facts {
		if f.Verdict == Correct || f.Verdict == Allowed {
			if f.WrongLanguage == "" {
				continue
			}
		}
		note := f.Verdict
		if f.Category != "" {
			note = f.Category
		}
		if f.Pending {
			note = "pending, " + note
		}
		if f.ValidUntil != "" {
			note += ", until " + f.ValidUntil
		}
		if f.WrongLanguage != "" {
			note += ", wrong language"
		}
		out = append(out, fmt.Sprintf("%s=%q (%s)", f.Key, f.Value, note))
	}
	return out
}

func forbiddenCell(c Conversation) string {
	if c.LeakTotal() == 0 {
		return "0"
	}
	var parts []string
	for _, cat := range gold.Categories {
		if n := c.Leaked[cat]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, cat))
		}
	}
	return strings.Join(parts, ", ")
}

// cell joins items for a table cell, with the characters that would break
// a row escaped.
func cell(items []string) string {
	if len(items) == 0 {
		return ""
	}
	s := strings.Join(slices.Clone(items), "; ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

func interval(i Interval) string { return fmt.Sprintf("[%s, %s]", f3(i[0]), f3(i[1])) }

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
