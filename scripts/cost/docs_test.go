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

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/samtemplate"
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
