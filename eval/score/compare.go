package score

import (
	"fmt"
	"io"
	"strings"
)

// CompareMarkdown writes a Markdown table of r's totals next to those of
// an earlier report old, and the conversations whose precision, recall,
// contradictions, forbidden facts or wrong-language count changed.
func (r Report) CompareMarkdown(w io.Writer, old Report) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n### Compared with %s (template %s, started %s)\n\n", labelOf(old.Run), old.Run.Template, old.Run.StartedAt.Format("2006-01-02 15:04 UTC"))
	p("| figure | before | now |\n|---|---:|---:|\n")
	a, n := old.Totals, r.Totals
	p("| precision | %s | %s |\n", f3(a.Precision), f3(n.Precision))
	p("| recall | %s | %s |\n", f3(a.Recall), f3(n.Recall))
	p("| perfect conversations | %d/%d | %d/%d |\n", a.Perfect, a.Conversations, n.Perfect, n.Conversations)
	p("| contradictions | %d | %d |\n", a.Contradictions, n.Contradictions)
	p("| forbidden facts kept | %d | %d |\n", a.ForbiddenTotal(), n.ForbiddenTotal())
	p("| values not in the user's language | %d | %d |\n", a.WrongLanguage, n.WrongLanguage)
	p("| model calls (failed) | %d (%d) | %d (%d) |\n", a.ModelCalls, a.FailedCalls, n.ModelCalls, n.FailedCalls)
	p("| input / output tokens | %d / %d | %d / %d |\n", a.InputTokens, a.OutputTokens, n.InputTokens, n.OutputTokens)
	p("| latency p50 / p95 | %s / %s | %s / %s |\n", ms(a.LatencyP50), ms(a.LatencyP95), ms(n.LatencyP50), ms(n.LatencyP95))

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
		p("\nNo conversation scored differently.\n")
	} else {
		p("\n| conversation | before | now |\n|---|---|---|\n%s\n", strings.Join(rows, "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summary is one cell with a conversation's scores.
func summary(c Conversation) string {
	return fmt.Sprintf("P %s R %s, %d contradictions, %d forbidden, %d wrong language",
		f3(c.Precision), f3(c.Recall), c.Contradictions, c.ForbiddenTotal(), c.WrongLanguage)
}
