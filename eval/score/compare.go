package score

import (
	"fmt"
	"io"
	"strings"
)

// CompareMarkdown writes a Markdown table of r's totals next to those of
// an earlier report old, with the paired bootstrap interval of the
// differences in F1 and leak rate (see [PairedDifference]): a difference
// is marked "beyond noise" when its interval excludes 0, and "within
// noise" otherwise. Then it lists the conversations whose scores changed.
func (r Report) CompareMarkdown(w io.Writer, old Report) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### Compared with %s (prompt %s, started %s)\n\n", labelOf(old.Run), old.Run.Prompt, old.Run.StartedAt.Format("2006-01-02 15:04 UTC"))
	a, n := old.Totals, r.Totals
	f1d, pairs := PairedDifference(old.Conversations, r.Conversations, microF1)
	leakd, _ := PairedDifference(old.Conversations, r.Conversations, leakRate)
	p("| figure | before | now | difference (95 %% interval over the %d conversations both scored) |\n|---|---:|---:|---|\n", pairs)
	p("| F1 | %s %s | %s %s | %s |\n", f3(a.F1), interval(a.F1Interval), f3(n.F1), interval(n.F1Interval), difference(n.F1-a.F1, f1d))
	p("| leak rate | %s %s | %s %s | %s |\n", f3(a.LeakRateAll), interval(a.LeakRateInterval), f3(n.LeakRateAll), interval(n.LeakRateInterval), difference(n.LeakRateAll-a.LeakRateAll, leakd))
	p("| mean F1 per conversation | %s | %s | |\n", f3(a.MeanF1), f3(n.MeanF1))
	p("| precision | %s | %s | |\n", f3(a.Precision), f3(n.Precision))
	p("| recall | %s | %s | |\n", f3(a.Recall), f3(n.Recall))
	p("| perfect conversations | %d/%d | %d/%d | |\n", a.Perfect, a.Conversations, n.Perfect, n.Conversations)
	p("| contradictions | %d | %d | |\n", a.Contradictions, n.Contradictions)
	p("| forbidden facts kept | %d | %d | |\n", a.LeakTotal(), n.LeakTotal())
	p("| values not in the user's language | %d | %d | |\n", a.WrongLanguage, n.WrongLanguage)
	p("| unsupported rate (SETs refused for their evidence / SETs answered) | %s (%d/%d) | %s (%d/%d) | |\n", f3(a.UnsupportedRate()), a.Unsupported, a.Sets, f3(n.UnsupportedRate()), n.Unsupported, n.Sets)
	p("| SETs left out as secrets / as ended / sent to pending | %d / %d / %d | %d / %d / %d | |\n", a.Secrets, a.Ended, a.PendingSets, n.Secrets, n.Ended, n.PendingSets)
	p("| kept quotes not a span of a user turn | %d/%d | %d/%d | |\n", a.BadQuotes, a.QuotesChecked, n.BadQuotes, n.QuotesChecked)
	p("| model calls (failed) | %d (%d) | %d (%d) | |\n", a.ModelCalls, a.FailedCalls, n.ModelCalls, n.FailedCalls)
	p("| input / output tokens | %d / %d | %d / %d | |\n", a.InputTokens, a.OutputTokens, n.InputTokens, n.OutputTokens)
	p("| latency p50 / p95 | %s / %s | %s / %s | |\n", ms(a.LatencyP50), ms(a.LatencyP95), ms(n.LatencyP50), ms(n.LatencyP95))
	p("%s", changedRows(old, r))
	_, err := io.WriteString(w, b.String())
	return err
}

// difference is the cell of a difference d with its interval i.
func difference(d float64, i Interval) string {
	mark := "within noise"
	if !i.Contains(0) {
		mark = "**beyond noise**"
	}
	return fmt.Sprintf("%+.3f %s, %s", d, interval(i), mark)
}

// changedRows returns the table of the conversations that scored
// differently in r than in old, or a sentence saying none did.
func changedRows(old, r Report) string {
	before := map[string]Conversation{}
	for _, c := range old.Conversations {
		before[c.ID] = c
	}
	var rows []string
	for _, c := range r.Conversations {
		o, ok := before[c.ID]
		if !ok {
			rows = append(rows, fmt.Sprintf("| %s | (not in the earlier run) | %s |", c.ID, summary(c)))
			continue
		}
		if summary(o) != summary(c) {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |", c.ID, summary(o), summary(c)))
		}
	}
	if len(rows) == 0 {
		return "\nNo conversation scored differently.\n"
	}
	return "\n| conversation | before | now |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
}

// summary is one cell with a conversation's scores.
func summary(c Conversation) string {
	return fmt.Sprintf("F1 %s (P %s R %s), %d contradictions, %d forbidden, %d wrong language, %d/%d SETs unsupported",
		f3(c.F1), f3(c.Precision), f3(c.Recall), c.Contradictions, c.LeakTotal(), c.WrongLanguage, c.Unsupported, c.Sets)
}
