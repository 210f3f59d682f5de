package score

import (
	"fmt"
	"strings"
)

// Verdicts of a judge (Fact.Judge).
const (
	JudgeSame      = "same"
	JudgeDifferent = "different"
	JudgeFailed    = "failed"
)

// JudgeSummary is what a second model made of the values the rules did
// not accept, reported apart from the rule-based figures so that a person
// can check the judge.
type JudgeSummary struct {
	Model string `json:"model"`
	// Asked counts the wrong values judged; Same, Different and Failed
	// count the verdicts.
	Asked     int `json:"asked"`
	Same      int `json:"same"`
	Different int `json:"different"`
	Failed    int `json:"failed"`
	// Satisfied and F1 are the run's had the judge's "same" verdicts
	// been accepted (one per expected subject; facts kept unchanged).
	Satisfied int     `json:"satisfied"`
	F1        float64 `json:"f1"`
}

// ApplyJudge asks verdict about every fact of r whose verdict is
// WrongValue (conversation ID and fact), records the answer in the
// fact's Judge (JudgeSame, JudgeDifferent, or JudgeFailed when verdict
// returns an error), and sets r.Judge. The rule-based figures are left
// as they are.
func (r *Report) ApplyJudge(model string, verdict func(convID string, f Fact) (bool, error)) {
	js := &JudgeSummary{Model: model}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		gained := map[string]bool{}
		for j := range c.Facts {
			f := &c.Facts[j]
			if f.Verdict != WrongValue {
				continue
			}
			js.Asked++
			same, err := verdict(c.ID, *f)
			switch {
			case err != nil:
				f.Judge = JudgeFailed
				js.Failed++
			case same:
				f.Judge = JudgeSame
				js.Same++
				gained[f.Subject] = true
			default:
				f.Judge = JudgeDifferent
				js.Different++
			}
		}
		js.Satisfied += c.Satisfied
		for _, m := range c.Missing {
			if gained[m] {
				js.Satisfied++
			}
		}
	}
	js.F1 = ratio(2*js.Satisfied, r.Totals.Kept+r.Totals.Expected)
	r.Judge = js
}

// judgeMarkdown is the section of the judge's verdicts, with every value
// it judged.
func (r Report) judgeMarkdown() string {
	if r.Judge == nil {
		return ""
	}
	j := r.Judge
	var b strings.Builder
	fmt.Fprintf(&b, "\n### A second model's verdicts (judge %s), apart from the rules\n\n", j.Model)
	fmt.Fprintf(&b, "Asked about %d values the rules refused: %d same, %d different, %d failed. Had its \"same\" been accepted, F1 would be %s (%d correct) instead of %s. Check each verdict below before trusting it.\n\n",
		j.Asked, j.Same, j.Different, j.Failed, f3(j.F1), j.Satisfied, f3(r.Totals.F1))
	if j.Asked == 0 {
		return b.String()
	}
	b.WriteString("| conversation | fact | judge |\n|---|---|---|\n")
	for _, c := range r.Conversations {
		for _, f := range c.Facts {
			if f.Judge != "" {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", c.ID, cell([]string{fmt.Sprintf("%s=%q", f.Key, f.Value)}), f.Judge)
			}
		}
	}
	return b.String()
}
