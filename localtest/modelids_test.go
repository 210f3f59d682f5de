package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modelIDPattern matches a Bedrock model ID or inference profile ID: an
// optional geography, a provider, and a name ending in a version
// (us.anthropic.claude-haiku-4-5-20251001-v1:0, amazon.nova-micro-v1:0).
var modelIDPattern = regexp.MustCompile(`\b(?:(?:us|us-gov|eu|apac|jp|au|ca|global)\.)?(?:amazon|anthropic|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer|stability|twelvelabs)\.[a-z0-9][a-z0-9.-]*-v\d+(?::\d+)?\b`)

// listedModelIDs returns the model IDs of docs/extractor.md's table of
// current models.
func listedModelIDs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "extractor.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- model-ids-begin -->", "<!-- model-ids-end -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/extractor.md has no table between %q and %q", begin, end)
	}
	ids := modelIDPattern.FindAllString(doc[i:j], -1)
	if len(ids) < 4 {
		t.Fatalf("docs/extractor.md lists %d model IDs: %v", len(ids), ids)
	}
	return ids
}

// TestModelIDPattern: the pattern finds the IDs as people write them,
// the retired one included, and not other dotted names.
func TestModelIDPattern(t *testing.T) {
	for text, want := range map[string]string{
		"--model-id us.anthropic.claude-3-5-haiku-20241022-v1:0.": "us.anthropic.claude-3-5-haiku-20241022-v1:0",
		"foundation-model/amazon.nova-micro-v1:0\"":               "amazon.nova-micro-v1:0",
		"-judge global.amazon.nova-2-lite-v1:0 -json":             "global.amazon.nova-2-lite-v1:0",
		"amazon.titan-text-express-v1":                            "amazon.titan-text-express-v1",
		"see aws.amazon.com/bedrock and amazon.nova-* profiles":   "",
	} {
		if got := modelIDPattern.FindString(text); got != want {
			t.Errorf("in %q found %q, want %q", text, got, want)
		}
	}
}

// TestModelIDsAreCurrent: every model ID that the README, the docs, the
// template and the Go code outside tests (the commands' hints and
// defaults) name is one of docs/extractor.md's current models.
func TestModelIDsAreCurrent(t *testing.T) {
	listed := listedModelIDs(t)
	var files []string
	for _, glob := range []string{"README.md", "*/README.md", "docs/*.md", "template.yaml"} {
		m, err := filepath.Glob(filepath.Join("..", glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || (strings.HasPrefix(d.Name(), ".") && path != "..")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range modelIDPattern.FindAllString(string(b), -1) {
			seen++
			if !slices.Contains(listed, id) {
				t.Errorf("%s names model %s, which is not among docs/extractor.md's current models (Model IDs)", f, id)
			}
		}
	}
	if seen < 10 {
		t.Errorf("found %d model IDs in %d files; the README alone names more", seen, len(files))
	}
}
