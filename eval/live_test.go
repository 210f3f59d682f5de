package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// standInReport runs the command on the stand-in over the whole gold set
// and returns its JSON report, read back, and the file's path.
func standInReport(t *testing.T, dir string, args ...string) (score.Report, string) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("r%d.json", len(args)))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append(args, "-json", path), streams{strings.NewReader(""), &stdout, &stderr}); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep score.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, path
}

// TestReplayReproducesAStandInRun replays a stand-in run's JSON report
// and checks that every figure comes out the same, with no model call;
// and that the three baselines score below the stand-in.
func TestReplayReproducesAStandInRun(t *testing.T) {
	dir := t.TempDir()
	first, path := standInReport(t, dir)
	again, _ := standInReport(t, dir, "-replay", path)
	if !again.Run.Replayed || first.Run.Replayed {
		t.Errorf("replayed = %v then %v, want false then true", first.Run.Replayed, again.Run.Replayed)
	}
	again.Run.Replayed = false
	if !reflect.DeepEqual(first, again) {
		t.Errorf("the replay differs:\nfirst totals %+v\nreplay totals %+v", first.Totals, again.Totals)
	}
	if first.Totals.ModelCalls == 0 {
		t.Fatal("the run made no model call")
	}
	for _, c := range first.Conversations {
		for _, call := range c.Calls {
			if call.RequestSHA256 == "" || call.Operations == nil {
				t.Fatalf("%s: a call without its request hash or operations: %+v", c.ID, call)
			}
		}
	}
	if len(first.Baselines) != 3 {
		t.Fatalf("%d baselines, want 3", len(first.Baselines))
	}
	for _, b := range first.Baselines {
		if b.Totals.F1 >= first.Totals.F1 {
			t.Errorf("baseline %s scores F1 %.3f, not below the stand-in's %.3f", b.Name, b.Totals.F1, first.Totals.F1)
		}
	}
}

// TestReplayRefusesWhatDoesNotFit checks that a replay of a report whose
// requests are not today's (another template) is refused.
func TestReplayRefusesWhatDoesNotFit(t *testing.T) {
	dir := t.TempDir()
	_, path := standInReport(t, dir, "-run", "^en-intro")
	tmpl := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(tmpl, []byte(memory.DefaultPrompt+"\nAnother line.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	for _, args := range [][]string{{"-replay", path, "-prompt", tmpl}, {"-replay", path, "-run", "^en-password"}, {"-replay", path, "-live"}} {
		stderr.Reset()
		if code := run(context.Background(), args, streams{strings.NewReader(""), &stdout, &stderr}); code != 1 || !strings.Contains(stderr.String(), "-replay") {
			t.Errorf("%v: exit %d, %s; want a refusal", args, code, stderr.String())
		}
	}
}

// TestBreakerStopsAfterFailuresInARow checks that a run stops, with the
// error, after FailuresInARow failed calls in a row, and that a success
// between failures resets the count.
func TestBreakerStopsAfterFailuresInARow(t *testing.T) {
	convs, err := gold.Load(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	fail := memorytest.Answer{Err: errors.New("AccessDeniedException: no access")}
	model := memorytest.NewModel(fail, fail, memorytest.Answer{}, fail, fail, fail, fail, fail)
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	br := &breaker{model: model, limit: FailuresInARow, stop: stop}
	_, err = RunAll(ctx, br, memory.Config{CheapModelID: "m"}, convs, 1, nil)
	cause := context.Cause(ctx)
	if err == nil || !errors.Is(cause, errStopped) || !strings.Contains(cause.Error(), "3 failed model calls in a row") || !strings.Contains(cause.Error(), "AccessDenied") {
		t.Errorf("RunAll = %v, cause %v; want a stop after 3 failures with the last error", err, cause)
	}
	// The sixth call trips the breaker (2 failures, 1 success, 3
	// failures); the threads under way finish their calls on a cancelled
	// context, and no other starts. A whole run makes hundreds.
	if n := model.Calls(); n < 6 || n > 20 {
		t.Errorf("%d model calls; the run should stop after the sixth", n)
	}
}

// noLive leaves the credential chain with dummy keys and a region, so
// that -live gets as far as its question and no further.
func noLive(t *testing.T) {
	awslive.NoCredentials(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "us-east-1")
}

// TestLiveAsksBeforeTheFirstCall checks that -live prints the calls,
// tokens and dollars it expects and starts only on a yes.
func TestLiveAsksBeforeTheFirstCall(t *testing.T) {
	noLive(t)
	for _, answer := range []string{"", "n\n", "no\n"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"-live", "-run", "^en-intro"}, streams{strings.NewReader(answer), &stdout, &stderr})
		out := stderr.String()
		if code != 1 || !strings.Contains(out, "about 1 model calls") || !strings.Contains(out, "about $0.0000") || !strings.Contains(out, "[y/N]") || !strings.Contains(out, "not started") {
			t.Errorf("answer %q: exit %d, stderr %q; want the estimate, the question and a refusal", answer, code, out)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-live", "-run", "^en-intro", "-model", "other.model-v1:0"}, streams{strings.NewReader("n\n"), &stdout, &stderr})
	if code != 1 || !strings.Contains(stderr.String(), "price unknown") {
		t.Errorf("an unknown model: exit %d, %q; want the price unknown", code, stderr.String())
	}
	code = run(context.Background(), []string{"-live", "-price", "cheap"}, streams{strings.NewReader(""), &stdout, &stderr})
	if code != 1 || !strings.Contains(stderr.String(), "USD per million") {
		t.Errorf("a bad -price: exit %d, %q", code, stderr.String())
	}
}

// TestKnownPricesAreTheCostDocs holds the prices of the estimate to
// docs/cost.md, which gives their source.
func TestKnownPricesAreTheCostDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "cost.md"))
	if err != nil {
		t.Fatal(err)
	}
	p := knownPrices[DefaultModelID]
	want := fmt.Sprintf("$%g per million input tokens, $%g per million output tokens", p[0], p[1])
	if !strings.Contains(string(b), want) {
		t.Errorf("docs/cost.md does not say %q", want)
	}
}

// TestJudgeIsReportedApart has a Converse server answer as a judge and
// checks that its verdicts are recorded on the wrong values only, and
// that the rule-based figures do not change.
func TestJudgeIsReportedApart(t *testing.T) {
	var asked []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		prompt := body.Messages[0].Content[0].Text
		asked = append(asked, prompt)
		verdict := "DIFFERENT"
		if strings.Contains(prompt, "Stored value: Greater Lisbon") {
			verdict = "SAME."
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"output":{"message":{"role":"assistant","content":[{"text":%q}]}},"stopReason":"end_turn","usage":{"inputTokens":9,"outputTokens":1,"totalTokens":10}}`, verdict)
	}))
	defer hs.Close()
	convs, err := gold.Load(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	var conv gold.Conversation
	for _, c := range convs {
		if c.ID == "en-intro-name-city-language" {
			conv = c
		}
	}
	sc := score.Score(conv, []memory.Fact{{Key: "name", Value: "Ana"}, {Key: "home_city", Value: "Greater Lisbon"}, {Key: "preferred_language", Value: "Spanish"}}, nil)
	rep := score.NewReport(score.Run{Backend: score.BackendBedrock, ModelID: "m"}, []gold.Conversation{conv}, []score.Conversation{sc})
	before := rep.Totals
	judgeWith(context.Background(), StandInClient(hs.URL), "judge-model", &rep, []gold.Conversation{conv})
	j := rep.Judge
	if j == nil || j.Asked != 2 || j.Same != 1 || j.Different != 1 || len(asked) != 2 || !reflect.DeepEqual(rep.Totals, before) {
		t.Fatalf("judge %+v after %d questions; totals changed: %v", j, len(asked), !reflect.DeepEqual(rep.Totals, before))
	}
	if j.Satisfied != before.Satisfied+1 || j.F1 <= before.F1 {
		t.Errorf("judge satisfied %d F1 %.3f, rules %d %.3f", j.Satisfied, j.F1, before.Satisfied, before.F1)
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil || !strings.Contains(md.String(), "judge judge-model") || !strings.Contains(md.String(), "| same |") {
		t.Errorf("Markdown lacks the judge's section: %v\n%s", err, md.String())
	}
}
