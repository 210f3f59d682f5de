package functions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// figure is one figure a document writes by hand: a pattern whose first
// group captures the figure as the document writes it, and the value the
// code or the template gives. Each match of the pattern must equal want
// once thousands separators are dropped, and the pattern must match.
type figure struct {
	pattern string
	want    any
}

// checkFigures holds the figures of docs/<name> to the code: the next
// figure a document states is one more line in the caller's list.
func checkFigures(t *testing.T, name string, figures []figure) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(raw)), " ")
	for _, f := range figures {
		want := fmt.Sprint(f.want)
		ms := regexp.MustCompile(f.pattern).FindAllStringSubmatch(doc, -1)
		if len(ms) == 0 {
			t.Errorf("docs/%s: no figure matches %q (want %s)", name, f.pattern, want)
		}
		for _, m := range ms {
			if got := strings.ReplaceAll(m[1], ",", ""); got != want {
				t.Errorf("docs/%s: %q says %s; the code gives %s", name, m[0], m[1], want)
			}
		}
	}
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
	read, edit := d("ReadReservedConcurrency"), d("EditReservedConcurrency")
	checkFigures(t, "scale.md", []figure{
		{"`ReadRateLimit` ([0-9,]+) requests/s", d("ReadRateLimit")},
		{"`ReadBurstLimit` ([0-9,]+)", d("ReadBurstLimit")},
		{"`EditRateLimit` ([0-9,]+)", d("EditRateLimit")},
		{"`EditBurstLimit` ([0-9,]+)", d("EditBurstLimit")},
		{"`ReadReservedConcurrency` ([0-9,]+)", read},
		{"`EditReservedConcurrency` ([0-9,]+)", edit},
		{`100 \+ ([0-9]+) \+ 4 × [0-9]+`, read},
		{`100 \+ [0-9]+ \+ 4 × ([0-9]+)`, edit},
		{`100 \+ [0-9]+ \+ 4 × [0-9]+ = ([0-9]+)`, 100 + toInt(t, read) + 4*toInt(t, edit)},
		{"`ExtractorMaxConcurrency` ([0-9]+) stays", d("ExtractorMaxConcurrency")},
		{"`TenantDailyModelCalls`\\) is ([0-9]+)", d("TenantDailyModelCalls")},
		{"`bedrock.FirstMaxTokens` \\(([0-9,]+)\\)", bedrock.FirstMaxTokens},
		{"`bedrock.AnswerTokens` ([0-9]+)", bedrock.AnswerTokens},
		{"`bedrock.OperationTokens` ([0-9]+)", bedrock.OperationTokens},
		{"each, at most ([0-9,]+)\\)", bedrock.MaxMaxTokens},
		{"`MaxOperations` ([0-9]+) operations", 2 * memory.DefaultMaxFacts},
		{"keys and values of ([0-9]+) characters", memory.DefaultMaxFactChars},
		{"and evidence of ([0-9]+)", memory.MaxEvidenceChars},
		{"`DefaultBudgetShards` \\(([0-9]+)\\)", dynamorepo.DefaultBudgetShards},
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
