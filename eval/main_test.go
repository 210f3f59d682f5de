package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/gold/goldtest"
	"github.com/usermemory/usermemory/eval/harness"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// goldSet loads the repository's gold set, failing the test now on an
// error.
func goldSet(t *testing.T) []gold.Conversation {
	t.Helper()
	convs, err := gold.Load(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

// standIn starts the Converse stand-in for the length of the test and
// returns it with the real bedrock client, at its defaults, over it.
func standIn(t *testing.T) (*fakebedrock.Server, *bedrock.Model) {
	t.Helper()
	s := fakebedrock.New()
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, bedrock.New(StandInClient(hs.URL))
}

// TestGoldSetOnStandIn runs the whole gold set through the store, the
// real bedrock client and the Converse stand-in, and checks that the
// report is well formed and its counts agree with each other and with the
// calls the stand-in received. It asserts no quality figure: those are the
// stand-in's rules, not a model's.
func TestGoldSetOnStandIn(t *testing.T) {
	convs := goldSet(t)
	s, model := standIn(t)
	cfg := memory.Config{CheapModelID: DefaultModelID}
	scores, err := RunAll(context.Background(), model, cfg, convs, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := score.NewReport(score.Run{Backend: score.BackendStandIn, ModelID: DefaultModelID}, convs, scores)

	store, err := memory.New(memorytest.NewRepo(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for i, c := range rep.Conversations {
		conv := convs[i]
		if c.ID != conv.ID {
			t.Fatalf("conversation %d is %s, want %s: the order must be the gold set's", i, c.ID, conv.ID)
		}
		// Messages, due extractions, the turns the beat leaves unread and
		// the idle read follow from the turns alone.
		dueCounts := goldtest.DueCounts(store, conv)
		due, unread, idle := len(dueCounts), len(conv.Turns), 0
		if due > 0 {
			unread -= dueCounts[due-1]
		}
		if unread > 0 {
			idle = 1
		}
		if c.Messages != len(conv.Calls()) || c.Due != due || len(c.Calls) != due+idle || c.UnreadTurns != unread || c.IdleReadTurns != unread {
			t.Errorf("%s: messages %d due %d calls %d unread %d read idle %d, want %d, %d, %d, %d, %d",
				c.ID, c.Messages, c.Due, len(c.Calls), c.UnreadTurns, c.IdleReadTurns, len(conv.Calls()), due, due+idle, unread, unread)
		}
		if idle == 1 && !c.Calls[len(c.Calls)-1].Idle {
			t.Errorf("%s: the last call is not marked as the idle read", c.ID)
		}
		for _, call := range c.Calls {
			if call.Failed != "" || call.InputTokens <= 0 || call.OutputTokens <= 0 {
				t.Errorf("%s: call %+v, want a successful call with tokens", c.ID, call)
			}
		}
		calls += len(c.Calls)
		// The verdicts add up to the counts.
		kept, correct, forbidden := 0, 0, 0
		for _, f := range c.Facts {
			switch f.Verdict {
			case score.Correct:
				correct++
			case score.ForbiddenKept:
				forbidden++
			case score.WrongValue, score.Duplicate, score.Extra, score.Allowed, score.WrongEnd, score.NotPending:
			default:
				t.Errorf("%s: unknown verdict %q", c.ID, f.Verdict)
			}
			if f.Verdict != score.Allowed {
				kept++
			}
		}
		if kept != c.Kept || correct != c.Satisfied || forbidden > c.LeakTotal()*len(c.Facts) || c.Expected != len(conv.Expect)+len(conv.Pending) ||
			c.Satisfied+len(c.Missing) != c.Expected {
			t.Errorf("%s: kept %d/%d correct %d/%d forbidden %d/%d expected %d missing %v", c.ID, kept, c.Kept, correct, c.Satisfied, forbidden, c.LeakTotal(), c.Expected, c.Missing)
		}
		if c.Precision < 0 || c.Precision > 1 || c.Recall < 0 || c.Recall > 1 {
			t.Errorf("%s: precision %v recall %v outside [0, 1]", c.ID, c.Precision, c.Recall)
		}
	}
	if n, _ := s.Calls(); n != calls || rep.Totals.ModelCalls != calls {
		t.Errorf("the stand-in got %d calls, the report counts %d and %d", n, calls, rep.Totals.ModelCalls)
	}
	if rep.Totals.Conversations != len(convs) || rep.Totals.FailedCalls != 0 {
		t.Errorf("totals %+v", rep.Totals)
	}

	// The JSON report reads back as written, and the Markdown has a row
	// per conversation.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back score.Report
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Totals, rep.Totals) || len(back.Conversations) != len(convs) {
		t.Errorf("the JSON report does not read back: %v", err)
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		if !strings.Contains(md.String(), "\n| "+c.ID+" | ") {
			t.Errorf("no Markdown row for %s", c.ID)
		}
	}

	// The stand-in is deterministic: a second run keeps the same facts.
	again, err := RunAll(context.Background(), model, cfg, convs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		if !reflect.DeepEqual(again[i].Facts, scores[i].Facts) {
			t.Errorf("%s: facts differ between two runs on the stand-in: %v and %v", convs[i].ID, scores[i].Facts, again[i].Facts)
		}
	}
}

// TestCommandOnStandIn runs the command as a user does, on a few
// conversations, with a template of one's own.
func TestCommandOnStandIn(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "mine.txt")
	if err := os.WriteFile(tmpl, []byte(memory.DefaultPrompt+"\nKeep values in the user's own language.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-run", "^en-(intro|password)", "-prompt", tmpl, "-json", jsonPath}, streams{strings.NewReader(""), &stdout, &stderr})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep score.Report
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Label, "not a model") || rep.Run.Backend != score.BackendStandIn || rep.Run.Prompt != "mine.txt" || len(rep.Conversations) != 2 || rep.Totals.ModelCalls != 2 {
		t.Errorf("report run %+v, %d conversations, %d calls", rep.Run, len(rep.Conversations), rep.Totals.ModelCalls)
	}
	if !strings.Contains(stdout.String(), "not a model") || !strings.Contains(stdout.String(), "| en-password |") {
		t.Errorf("Markdown = %s", stdout.String())
	}

	// A second run compared with the first, into a file: the same scores.
	stdout.Reset()
	mdPath := filepath.Join(dir, "r.md")
	code = run(context.Background(), []string{"-run", "^en-(intro|password)", "-compare", jsonPath, "-md", mdPath}, streams{strings.NewReader(""), &stdout, &stderr})
	md, err := os.ReadFile(mdPath)
	if code != 0 || err != nil || stdout.Len() != 0 || !strings.Contains(string(md), "### Compared with") || !strings.Contains(string(md), "No conversation scored differently") {
		t.Errorf("exit %d (%v), stdout %q, comparison:\n%s\n%s", code, err, stdout.String(), md, stderr.String())
	}
}

func TestCommandRefusesBadUsage(t *testing.T) {
	dir := t.TempDir()
	noFacts := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(noFacts, []byte("no placeholder"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyJSON := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(emptyJSON, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-nope"}, 2, "flag provided but not defined"},
		{[]string{"extra"}, 2, "unexpected argument"},
		{[]string{"-template", noFacts}, 1, "{facts}"},
		{[]string{"-prompt", filepath.Join(dir, "missing.txt")}, 1, "-prompt"},
		{[]string{"-output-mode", "xml"}, 1, "tool or json"},
		{[]string{"-run", "^nothing$"}, 1, "matches no conversation"},
		{[]string{"-every", "0"}, 1, "extractEveryTurns"},
		{[]string{"-compare", noFacts}, 1, "not a JSON report"},
		{[]string{"-compare", emptyJSON}, 1, "not a JSON report"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, streams{strings.NewReader(""), &stdout, &stderr})
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func TestLiveRefusesWithoutCredentials(t *testing.T) {
	awslive.NoCredentials(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-live", "-region", "us-east-1", "-model", "us.amazon.nova-lite-v1:0"}, streams{strings.NewReader(""), &stdout, &stderr})
	if code != 1 || !strings.Contains(stderr.String(), "-live needs AWS credentials") || stdout.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q; want exit 1 and the refusal", code, stderr.String(), stdout.String())
	}
}

func TestLiveRefusesWithoutRegion(t *testing.T) {
	awslive.NoCredentials(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-live"}, streams{strings.NewReader(""), &stdout, &stderr})
	if code != 1 || !strings.Contains(stderr.String(), "-live needs an AWS region") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the refusal", code, stderr.String())
	}
}

// TestEveryCallFailed checks that a run whose model calls all fail, as
// with a model the account may not invoke, writes its report and then
// fails with the first error.
func TestEveryCallFailed(t *testing.T) {
	s, model := standIn(t)
	convs := goldSet(t)[:2]
	for range 10 {
		s.Script(fakebedrock.AccessDenied())
	}
	scores, err := RunAll(context.Background(), model, memory.Config{CheapModelID: "m"}, convs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := score.NewReport(score.Run{Backend: score.BackendStandIn}, convs, scores)
	var stderr bytes.Buffer
	err = failedCalls(rep, &stderr)
	if err == nil || !strings.Contains(err.Error(), "every model call failed") || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("failedCalls = %v, want every call failed with the access error", err)
	}
	if rep.Totals.FailedCalls != rep.Totals.ModelCalls || rep.Totals.ModelCalls == 0 {
		t.Errorf("totals %+v", rep.Totals)
	}
}

var updateREADME = flag.Bool("update-readme", false, "rewrite the README's block of the stand-in's figures from a run")

// standInFigure matches a figure of a run as the README would state it:
// tokens, model calls and messages (two digits or more: "3 model calls
// that failed in a row" is a constant), an F1, a leak rate.
var standInFigure = regexp.MustCompile(`\b\d[\d,]* (?:input|output)(?: and \d[\d,]* output)? tokens|\b\d[\d,]{2,} (?:model calls|messages)\b|\bF1 \*{0,2}0\.\d+|leak rate \*{0,2}0\.\d+`)

// TestREADMEStandInFigures runs the whole gold set on the stand-in and
// holds the README's block of its figures to the run's headline: the
// README states no figure that a run does not give.
func TestREADMEStandInFigures(t *testing.T) {
	const begin, end = "<!-- eval-standin-begin -->\n", "<!-- eval-standin-end -->\n"
	path := "README.md" // eval/README.md
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(b, []byte(begin)), bytes.Index(b, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("README.md has no block %q…%q", begin, end)
	}
	convs := goldSet(t)
	_, model := standIn(t)
	// One at a time, as go run ./eval does: the stand-in numbers its
	// tool-use IDs in the order of the calls, and its token counts, the
	// answer's bytes / 4, round with their length.
	scores, err := RunAll(context.Background(), model, memory.Config{CheapModelID: DefaultModelID}, convs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := score.NewReport(score.Run{Backend: score.BackendStandIn, ModelID: DefaultModelID}, convs, scores)
	// A figure of a run outside the blocks would escape this test: there
	// is none. The block of the import figures is held by
	// TestREADMEImportFigures.
	outside := withoutBlock(string(b[:i])+string(b[j:]), importsBegin, importsEnd)
	if m := standInFigure.FindAllString(outside, -1); len(m) > 0 {
		t.Errorf("README.md states figures of a run outside its block %s…%s, where no test holds them: %q", strings.TrimSpace(begin), strings.TrimSpace(end), m)
	}
	want := "\n" + rep.Headline() + "\n"
	got := string(b[i+len(begin) : j])
	if got == want {
		return
	}
	if *updateREADME {
		out := append(append(append([]byte{}, b[:i+len(begin)]...), want...), b[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's stand-in figures differ from a run (go test ./eval/ -run README -update-readme rewrites them):\n--- README\n%s\n--- run\n%s", got, want)
}

// TestDefaultModelIsTheTemplates holds -model's default to the model
// template.yaml's extractor calls when deployed in a US Region.
func TestDefaultModelIsTheTemplates(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := tmpl.ParameterDefault("CheapFoundationModelId"); DefaultModelID != "us."+m {
		t.Errorf("DefaultModelID %s is not template.yaml's CheapFoundationModelId %s through the us. profile", DefaultModelID, m)
	}
}

// The README's block of the stand-in's import figures.
const importsBegin, importsEnd = "<!-- eval-imports-begin -->\n", "<!-- eval-imports-end -->\n"

// withoutBlock returns s without the block begin…end, markers included.
func withoutBlock(s, begin, end string) string {
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return s
	}
	return s[:i] + s[j+len(end):]
}

// TestREADMEImportFigures runs every gold import case on the stand-in and
// holds the README's block of the import figures to the run's headline
// of imports (score.ImportsHeadline); -update-readme rewrites it.
func TestREADMEImportFigures(t *testing.T) {
	path := "README.md" // eval/README.md
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(b, []byte(importsBegin)), bytes.Index(b, []byte(importsEnd))
	if i < 0 || j < i {
		t.Fatalf("README.md has no block %q…%q", importsBegin, importsEnd)
	}
	cases, err := gold.LoadImports(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	_, model := standIn(t)
	scores, err := harness.RunImports(context.Background(), model, memory.Config{CheapModelID: DefaultModelID}, cases)
	if err != nil {
		t.Fatal(err)
	}
	want := "\n" + score.ImportsHeadline(scores) + "\n"
	got := string(b[i+len(importsBegin) : j])
	if got == want {
		return
	}
	if *updateREADME {
		out := append(append(append([]byte{}, b[:i+len(importsBegin)]...), want...), b[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's import figures differ from a run (go test ./eval/ -run README -update-readme rewrites them):\n--- README\n%s\n--- run\n%s", got, want)
}
