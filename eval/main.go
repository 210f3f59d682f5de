// Command eval scores the memory: it runs the gold conversations of
// eval/gold through the real memory.Store and the real bedrock client, and
// writes a Markdown report headed by F1 with its bootstrap interval beside
// three baselines, and, on request, a JSON report that records every
// model answer, so that a later run can be compared with it (-compare)
// and the answers scored again without a model call (-replay). Under the
// headline it gives the unsupported rate (the SETs the store refused
// because their evidence is not the user's words, over the SETs answered),
// the SETs left out as secrets or as ended and those sent to the pending
// facts, and the kept quotes that the harness's own check finds are not a
// span of a user turn: on a first live run, read the unsupported rate
// first. The gold import cases (memory lists pasted from another
// assistant, read by memory.Store.Import) run after the conversations
// and are scored apart: precision, recall and leak rate.
//
// By default the model is the Converse stand-in (internal/fakebedrock),
// started in the process: its rule-based extraction, not a model, so its
// figures only show that the harness runs and scores. With -live the
// client calls Amazon Bedrock with the default AWS credential chain, for
// any model ID given with -model, after printing the calls, tokens and
// dollars it expects and asking (-yes does not ask); it stops after 3
// failed calls in a row. -judge has a second model judge the values the
// rules refused, reported apart.
//
//	go run ./eval                                   # the stand-in
//	go run ./eval -live -model us.amazon.nova-lite-v1:0 -price 0.06,0.24 -json nova-lite.json > nova-lite.md
//	go run ./eval -replay nova-lite.json            # scored again, no model call
//	go run ./eval -live -model us.amazon.nova-lite-v1:0 -prompt my_prompt.txt -compare nova-lite.json
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/harness"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

// DefaultModelID is the model ID of a run without -model: the template's
// default CheapModelId.
const DefaultModelID = "us.amazon.nova-micro-v1:0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], streams{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(code)
}

// options are the command's flags.
type options struct {
	live       bool
	yes        bool
	modelID    string
	judgeModel string
	region     string
	outputMode string
	prompt     string
	every      int
	goldDir    string
	only       string
	jsonPath   string
	mdPath     string
	compare    string
	replay     string
	price      string
	parallel   int
}

// streams are the command's standard streams: stdin answers the
// question of -live.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// run is the command: it returns the exit code, 0 on success, 1 when the
// run failed, 2 on bad usage.
func run(ctx context.Context, args []string, st streams) int {
	var o options
	fl := flag.NewFlagSet("eval", flag.ContinueOnError)
	fl.SetOutput(st.stderr)
	fl.BoolVar(&o.live, "live", false, "call Amazon Bedrock with the default AWS credential chain instead of the local stand-in")
	fl.BoolVar(&o.yes, "yes", false, "with -live, start without asking after printing the expected calls, tokens and dollars")
	fl.StringVar(&o.modelID, "model", DefaultModelID, "the model ID or inference profile ID to score")
	fl.StringVar(&o.judgeModel, "judge", "", "with -live or -replay, a Bedrock model ID that decides whether an unmatched value means an accepted one (reported apart)")
	fl.StringVar(&o.region, "region", "", "the AWS region of -live (default: the credential chain's, AWS_REGION)")
	fl.StringVar(&o.outputMode, "output-mode", "tool", "tool (a forced tool call) or json (for models that refuse a forced tool choice)")
	fl.StringVar(&o.prompt, "prompt", "", "a MEMORY_USER prompt file to score instead of the default one; it must hold {facts}")
	fl.StringVar(&o.prompt, "template", "", "the former name of -prompt, kept as an alias")
	fl.IntVar(&o.every, "every", memory.DefaultExtractEveryTurns, "extractEveryTurns: the gateway's extraction beat")
	fl.StringVar(&o.goldDir, "gold", "", "a gold set folder (subjects.yaml and conversations/*.yaml) instead of the built-in one")
	fl.StringVar(&o.only, "run", "", "score only the conversations whose ID matches this regular expression")
	fl.StringVar(&o.jsonPath, "json", "", "also write the report as JSON to this file")
	fl.StringVar(&o.mdPath, "md", "", "write the Markdown report to this file instead of standard output")
	fl.StringVar(&o.compare, "compare", "", "a JSON report of an earlier run: add a table of what changed since, with the differences beyond noise marked")
	fl.StringVar(&o.replay, "replay", "", "a JSON report of an earlier run: score its recorded model answers again with today's scorer and gold set, calling no model")
	fl.StringVar(&o.price, "price", "", "with -live, the model's on-demand price as USD per million input,output tokens (e.g. 0.06,0.24); known for the default model")
	fl.IntVar(&o.parallel, "parallel", 1, "conversations run at once")
	fl.Usage = func() {
		fmt.Fprintf(st.stderr, "usage: go run ./eval [flags]\n\nScores the memory on the gold conversations. Without -live the model is the local\nConverse stand-in: its rule-based extraction, not a model.\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(st.stderr, "eval: unexpected argument %q (flags only)\n", fl.Arg(0))
		return 2
	}
	if err := execute(ctx, o, st); err != nil {
		fmt.Fprintf(st.stderr, "eval: %v\n", err)
		return 1
	}
	return 0
}

// setup is what every mode of the command reads before it runs: the
// configuration, the run's description, the conversations and the
// report to compare with.
type setup struct {
	cfg   memory.Config
	mode  bedrock.OutputMode
	run   score.Run
	convs []gold.Conversation
	old   *score.Report
	// imports are the gold import cases of the run (those -run matches),
	// importScores their scores once run; a replay runs none.
	imports      []gold.ImportCase
	importScores []score.Import
}

func prepare(o options) (setup, error) {
	var su setup
	switch {
	case o.parallel < 1:
		return su, errors.New("-parallel must be at least 1")
	case o.every < 1:
		return su, fmt.Errorf("-every (extractEveryTurns) must be at least 1, not %d", o.every)
	case o.replay != "" && o.live:
		return su, errors.New("-replay calls no model: leave out -live")
	}
	mode, err := bedrock.ParseOutputMode(o.outputMode)
	if err != nil {
		return su, err
	}
	su.mode = mode
	su.cfg = memory.Config{ExtractEveryTurns: o.every, CheapModelID: o.modelID}
	su.run = score.Run{ModelID: o.modelID, OutputMode: string(mode), Prompt: "default", ExtractEveryTurns: o.every}
	if o.prompt != "" {
		b, err := os.ReadFile(o.prompt)
		if err != nil {
			return su, fmt.Errorf("-prompt: %w", err)
		}
		su.cfg.Prompt, su.run.Prompt = string(b), filepath.Base(o.prompt)
	}
	if err := su.cfg.Validate(); err != nil {
		return su, fmt.Errorf("the configuration: %w", err)
	}
	sum := sha256.Sum256([]byte(su.cfg.WithDefaults().Prompt))
	su.run.PromptSHA256 = hex.EncodeToString(sum[:])
	if o.compare != "" {
		if su.old, err = readReport(o.compare, "-compare"); err != nil {
			return su, err
		}
	}
	if su.convs, err = loadGold(o); err != nil {
		return su, err
	}
	su.imports, err = loadImports(o)
	return su, err
}

// loadImports loads the gold import cases of o: those -run matches, all
// without -run.
func loadImports(o options) ([]gold.ImportCase, error) {
	var fsys fs.FS = gold.Default()
	if o.goldDir != "" {
		fsys = os.DirFS(o.goldDir)
	}
	cases, err := gold.LoadImports(fsys)
	if err != nil || o.only == "" {
		return cases, err
	}
	re, err := regexp.Compile(o.only)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	return slices.DeleteFunc(cases, func(c gold.ImportCase) bool { return !re.MatchString(c.ID) }), nil
}

// readReport reads a JSON report of this command from path; flag names
// the flag that gave it, for the errors.
func readReport(path, flag string) (*score.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	rep := new(score.Report)
	if err := json.Unmarshal(b, rep); err != nil {
		return nil, fmt.Errorf("%s: %s is not a JSON report of this command: %w", flag, path, err)
	}
	if rep.Run.Backend == "" || rep.Totals.Conversations == 0 {
		return nil, fmt.Errorf("%s: %s is not a JSON report of this command (no run or no conversation)", flag, path)
	}
	return rep, nil
}

// loadGold loads the gold set of o, only the conversations -run matches
// and the other threads of their users.
func loadGold(o options) ([]gold.Conversation, error) {
	var fsys fs.FS = gold.Default()
	if o.goldDir != "" {
		fsys = os.DirFS(o.goldDir)
	}
	convs, err := gold.Load(fsys)
	if err != nil || o.only == "" {
		return convs, err
	}
	re, err := regexp.Compile(o.only)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	groups, err := gold.Threads(convs)
	if err != nil {
		return nil, err
	}
	var kept []gold.Conversation
	for _, g := range groups {
		if slices.ContainsFunc(g, func(i int) bool { return re.MatchString(convs[i].ID) }) {
			for _, i := range g {
				kept = append(kept, convs[i])
			}
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("-run %q matches no conversation", o.only)
	}
	slices.SortFunc(kept, func(a, b gold.Conversation) int { return strings.Compare(a.ID, b.ID) })
	return kept, nil
}

func execute(ctx context.Context, o options, st streams) error {
	su, err := prepare(o)
	if err != nil {
		return err
	}
	var scores []score.Conversation
	switch {
	case o.replay != "":
		scores, err = replayRun(ctx, o, &su)
	case o.live:
		scores, err = liveRun(ctx, o, &su, st)
	default:
		scores, err = standInRun(ctx, o, &su)
	}
	if err != nil {
		return err
	}
	rep := score.NewReport(su.run, su.convs, scores)
	rep.SetImports(su.importScores)
	if o.judgeModel != "" {
		if err := judgeReport(ctx, o, &rep, su.convs, st.stderr); err != nil {
			return err
		}
	}
	if err := writeReport(o, rep, su.old, st.stdout); err != nil {
		return err
	}
	return failedCalls(rep, st.stderr)
}

// standInRun runs the conversations on the Converse stand-in, started in
// the process.
func standInRun(ctx context.Context, o options, su *setup) ([]score.Conversation, error) {
	if o.judgeModel != "" {
		return nil, errors.New("-judge asks a Bedrock model: use it with -live or -replay")
	}
	su.run.Backend = score.BackendStandIn
	s, err := fakebedrock.Start("")
	if err != nil {
		return nil, fmt.Errorf("start the Converse stand-in: %w", err)
	}
	defer s.Close()
	model := bedrock.New(StandInClient(s.URL()), bedrock.WithOutputMode(su.mode), bedrock.WithAttemptTimeout(60*time.Second))
	su.run.StartedAt = time.Now().UTC().Truncate(time.Second)
	scores, err := RunAll(ctx, model, su.cfg, su.convs, o.parallel, nil)
	if err != nil {
		return nil, err
	}
	su.importScores, err = harness.RunImports(ctx, model, su.cfg, su.imports)
	return scores, err
}

// replayRun scores again the calls recorded in the report of -replay:
// the run is that report's, the prompt must be the one it used.
func replayRun(ctx context.Context, o options, su *setup) ([]score.Conversation, error) {
	old, err := readReport(o.replay, "-replay")
	if err != nil {
		return nil, err
	}
	if old.Run.PromptSHA256 != su.run.PromptSHA256 || old.Run.ExtractEveryTurns != su.run.ExtractEveryTurns {
		return nil, fmt.Errorf("-replay: %s ran prompt %s (sha256 %.12s) at -every %d: give the same -prompt and -every",
			o.replay, old.Run.Prompt, old.Run.PromptSHA256, old.Run.ExtractEveryTurns)
	}
	su.run = old.Run
	su.run.Replayed = true
	su.cfg.CheapModelID = old.Run.ModelID
	if su.importScores, err = replayImports(ctx, o, su, old); err != nil {
		return nil, err
	}
	recorded := map[string][]score.Call{}
	for _, c := range old.Conversations {
		recorded[c.ID] = c.Calls
	}
	groups, err := gold.Threads(su.convs)
	if err != nil {
		return nil, err
	}
	return runGroups(ctx, groups, su.convs, 1, nil, func(ctx context.Context, threads []gold.Conversation) ([]score.Conversation, error) {
		var calls []score.Call
		for _, c := range threads {
			cs, ok := recorded[c.ID]
			if !ok {
				return nil, fmt.Errorf("-replay: %s has no conversation %s: narrow the run with -run", o.replay, c.ID)
			}
			calls = append(calls, cs...)
		}
		rp := harness.NewReplayer(calls)
		scores, err := harness.RunThreads(ctx, rp, su.cfg, threads)
		if err == nil {
			err = rp.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("-replay: %s: %w", threads[0].ID, err)
		}
		return scores, nil
	})
}

// replayImports scores again the import calls recorded in old, the
// report of -replay: none when old has no import case (a report of
// before the imports).
func replayImports(ctx context.Context, o options, su *setup, old *score.Report) ([]score.Import, error) {
	if len(old.Imports) == 0 {
		su.imports = nil
		return nil, nil
	}
	recorded := map[string][]score.Call{}
	for _, i := range old.Imports {
		recorded[i.ID] = i.Calls
	}
	out := make([]score.Import, 0, len(su.imports))
	for _, c := range su.imports {
		calls, ok := recorded[c.ID]
		if !ok {
			return nil, fmt.Errorf("-replay: %s has no import case %s: narrow the run with -run", o.replay, c.ID)
		}
		rp := harness.NewReplayer(calls)
		s, err := harness.RunImport(ctx, rp, su.cfg, c)
		if err == nil {
			err = rp.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("-replay: import case %s: %w", c.ID, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// writeReport writes the JSON report (-json) and the Markdown one, with
// the comparison when there is an earlier report.
func writeReport(o options, rep score.Report, old *score.Report, stdout io.Writer) error {
	if o.jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		return err
	}
	if old != nil {
		if err := rep.CompareMarkdown(&md, *old); err != nil {
			return err
		}
	}
	if o.mdPath != "" {
		return os.WriteFile(o.mdPath, md.Bytes(), 0o644)
	}
	_, err := stdout.Write(md.Bytes())
	return err
}

// failedCalls tells of the model calls that failed, with the first error:
// a few are scored as they are (the model's answer, or its failure, is
// what a user would get); when every call failed the run measured nothing
// of the model and is an error.
func failedCalls(rep score.Report, stderr io.Writer) error {
	t := rep.Totals
	if t.FailedCalls == 0 {
		return nil
	}
	first := ""
	for _, c := range rep.Conversations {
		for _, call := range c.Calls {
			if call.Failed != "" && first == "" {
				first = c.ID + ": " + call.Error
			}
		}
	}
	if t.FailedCalls == t.ModelCalls {
		return fmt.Errorf("every model call failed (%d); the first, %s", t.FailedCalls, first)
	}
	fmt.Fprintf(stderr, "eval: %d of %d model calls failed or were refused; the first, %s\n", t.FailedCalls, t.ModelCalls, first)
	return nil
}

// RunAll runs convs, parallel threads of users at a time (see
// gold.Threads: the conversations that continue one another run in
// order, as one user's threads), and returns their scores in the order of
// convs; done, when not nil, is called after each user. It stops at the
// first error.
func RunAll(ctx context.Context, model memory.Model, cfg memory.Config, convs []gold.Conversation, parallel int, done func(score.Conversation)) ([]score.Conversation, error) {
	groups, err := gold.Threads(convs)
	if err != nil {
		return nil, err
	}
	return runGroups(ctx, groups, convs, parallel, done, func(ctx context.Context, threads []gold.Conversation) ([]score.Conversation, error) {
		return harness.RunThreads(ctx, model, cfg, threads)
	})
}

// runGroups runs each group of convs with runThreads, parallel at a time,
// and returns the scores in the order of convs.
func runGroups(ctx context.Context, groups [][]int, convs []gold.Conversation, parallel int, done func(score.Conversation),
	runThreads func(context.Context, []gold.Conversation) ([]score.Conversation, error)) ([]score.Conversation, error) {
	out := make([]score.Conversation, len(convs))
	errs := make([]error, len(groups))
	sem := make(chan struct{}, max(parallel, 1))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for gi, g := range groups {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			threads := make([]gold.Conversation, len(g))
			for k, i := range g {
				threads[k] = convs[i]
			}
			scores, err := runThreads(ctx, threads)
			if errs[gi] = err; err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for k, i := range g {
				out[i] = scores[k]
				if done != nil {
					done(scores[k])
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, ctx.Err()
}

// StandInClient returns a Bedrock Runtime client for the stand-in at url,
// with static dummy credentials (anonymous ones make the client take the
// bearer-token path).
func StandInClient(url string) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("stand-in", "stand-in", ""),
	})
}

// liveClient returns a Bedrock Runtime client with the default credential
// chain, after checking that it finds credentials and a region.
func liveClient(ctx context.Context, region string) (*bedrockruntime.Client, string, error) {
	cfg, err := awslive.Config(ctx, "-live", region)
	if err != nil {
		return nil, "", err
	}
	return bedrockruntime.NewFromConfig(cfg), cfg.Region, nil
}
