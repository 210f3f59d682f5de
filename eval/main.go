// Command eval scores the memory: it runs the gold conversations of
// eval/gold through the real memory.Store and the real bedrock client, and
// writes a Markdown table and, on request, a JSON report that a later run
// can be compared with.
//
// By default the model is the Converse stand-in (internal/fakebedrock),
// started in the process: its rule-based extraction, not a model, so its
// figures only show that the harness runs and scores. With -live the
// client calls Amazon Bedrock with the default AWS credential chain, for
// any model ID given with -model.
//
//	go run ./eval                                   # the stand-in
//	go run ./eval -live -model us.amazon.nova-lite-v1:0 -json nova-lite.json > nova-lite.md
//	go run ./eval -live -model us.amazon.nova-lite-v1:0 -template my_template.txt -compare nova-lite.json
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
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/harness"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

// DefaultModelID is the model ID of a run without -model: the template's
// default CheapModelId.
const DefaultModelID = "us.amazon.nova-micro-v1:0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command's flags.
type options struct {
	live       bool
	modelID    string
	region     string
	outputMode string
	template   string
	every      int
	goldDir    string
	only       string
	jsonPath   string
	mdPath     string
	compare    string
	parallel   int
}

// run is the command: it returns the exit code, 0 on success, 1 when the
// run failed, 2 on bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fl := flag.NewFlagSet("eval", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.BoolVar(&o.live, "live", false, "call Amazon Bedrock with the default AWS credential chain instead of the local stand-in")
	fl.StringVar(&o.modelID, "model", DefaultModelID, "the model ID or inference profile ID to score")
	fl.StringVar(&o.region, "region", "", "the AWS region of -live (default: the credential chain's, AWS_REGION)")
	fl.StringVar(&o.outputMode, "output-mode", "tool", "tool (a forced tool call) or json (for models that refuse a forced tool choice)")
	fl.StringVar(&o.template, "template", "", "a MEMORY_USER template file to score instead of the default one; it must hold {facts}")
	fl.IntVar(&o.every, "every", memory.DefaultExtractEveryTurns, "extractEveryTurns: the gateway's extraction beat")
	fl.StringVar(&o.goldDir, "gold", "", "a gold set folder (subjects.yaml and conversations/*.yaml) instead of the built-in one")
	fl.StringVar(&o.only, "run", "", "score only the conversations whose ID matches this regular expression")
	fl.StringVar(&o.jsonPath, "json", "", "also write the report as JSON to this file")
	fl.StringVar(&o.mdPath, "md", "", "write the Markdown report to this file instead of standard output")
	fl.StringVar(&o.compare, "compare", "", "a JSON report of an earlier run: add a table of what changed since")
	fl.IntVar(&o.parallel, "parallel", 1, "conversations run at once")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./eval [flags]\n\nScores the memory on the gold conversations. Without -live the model is the local\nConverse stand-in: its rule-based extraction, not a model.\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "eval: unexpected argument %q (flags only)\n", fl.Arg(0))
		return 2
	}
	if err := execute(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return 1
	}
	return 0
}

func execute(ctx context.Context, o options, stdout, stderr io.Writer) error {
	if o.parallel < 1 {
		return errors.New("-parallel must be at least 1")
	}
	if o.every < 1 {
		return fmt.Errorf("-every (extractEveryTurns) must be at least 1, not %d", o.every)
	}
	mode, err := bedrock.ParseOutputMode(o.outputMode)
	if err != nil {
		return err
	}
	cfg := memory.Config{ExtractEveryTurns: o.every, CheapModelID: o.modelID}
	run := score.Run{ModelID: o.modelID, OutputMode: string(mode), Template: "default", ExtractEveryTurns: o.every}
	if o.template != "" {
		b, err := os.ReadFile(o.template)
		if err != nil {
			return fmt.Errorf("-template: %w", err)
		}
		cfg.Template, run.Template = string(b), filepath.Base(o.template)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("the configuration: %w", err)
	}
	sum := sha256.Sum256([]byte(cfg.WithDefaults().Template))
	run.TemplateSHA256 = hex.EncodeToString(sum[:])

	var old *score.Report
	if o.compare != "" {
		b, err := os.ReadFile(o.compare)
		if err != nil {
			return fmt.Errorf("-compare: %w", err)
		}
		old = new(score.Report)
		if err := json.Unmarshal(b, old); err != nil {
			return fmt.Errorf("-compare: %s is not a JSON report of this command: %w", o.compare, err)
		}
		if old.Run.Backend == "" || old.Totals.Conversations == 0 {
			return fmt.Errorf("-compare: %s is not a JSON report of this command (no run or no conversation)", o.compare)
		}
	}

	var fsys fs.FS = gold.Default()
	if o.goldDir != "" {
		fsys = os.DirFS(o.goldDir)
	}
	convs, err := gold.Load(fsys)
	if err != nil {
		return err
	}
	if o.only != "" {
		re, err := regexp.Compile(o.only)
		if err != nil {
			return fmt.Errorf("-run: %w", err)
		}
		var kept []gold.Conversation
		for _, c := range convs {
			if re.MatchString(c.ID) {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return fmt.Errorf("-run %q matches no conversation", o.only)
		}
		convs = kept
	}

	var client *bedrockruntime.Client
	if o.live {
		run.Backend = score.BackendBedrock
		client, run.Region, err = liveClient(ctx, o.region)
		if err != nil {
			return err
		}
	} else {
		run.Backend = score.BackendStandIn
		s, err := fakebedrock.Start("")
		if err != nil {
			return fmt.Errorf("start the Converse stand-in: %w", err)
		}
		defer s.Close()
		client = StandInClient(s.URL())
	}
	model := bedrock.New(client, bedrock.WithOutputMode(mode), bedrock.WithAttemptTimeout(60*time.Second))

	run.StartedAt = time.Now().UTC().Truncate(time.Second)
	if o.live {
		fmt.Fprintf(stderr, "eval: %d conversations against Bedrock %s in %s…\n", len(convs), o.modelID, run.Region)
	}
	scores, err := RunAll(ctx, model, cfg, convs, o.parallel, func(c score.Conversation) {
		if o.live {
			fmt.Fprintf(stderr, "eval: %s precision %.2f recall %.2f\n", c.ID, c.Precision, c.Recall)
		}
	})
	if err != nil {
		return err
	}
	rep := score.NewReport(run, scores)
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
		err = os.WriteFile(o.mdPath, md.Bytes(), 0o644)
	} else {
		_, err = stdout.Write(md.Bytes())
	}
	if err != nil {
		return err
	}
	return failedCalls(rep, stderr)
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

// RunAll runs convs, parallel at a time, and returns their scores in the
// order of convs; done, when not nil, is called after each one. It stops
// at the first error.
func RunAll(ctx context.Context, model memory.Model, cfg memory.Config, convs []gold.Conversation, parallel int, done func(score.Conversation)) ([]score.Conversation, error) {
	out := make([]score.Conversation, len(convs))
	errs := make([]error, len(convs))
	sem := make(chan struct{}, max(parallel, 1))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, c := range convs {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i], errs[i] = harness.Run(ctx, model, cfg, c)
			if errs[i] == nil && done != nil {
				mu.Lock()
				done(out[i])
				mu.Unlock()
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

// errNoCredentials and errNoRegion are the refusals of -live.
var (
	errNoCredentials = errors.New("-live needs AWS credentials, and the default credential chain found none " +
		"(environment variables, shared config and credentials files, SSO, web identity, container or instance role): " +
		"run `aws configure` or `aws sso login`, or set AWS_PROFILE, then try again")
	errNoRegion = errors.New("-live needs an AWS region: set AWS_REGION or pass -region")
)

// liveClient returns a Bedrock Runtime client with the default credential
// chain, after checking that it finds credentials and a region.
func liveClient(ctx context.Context, region string) (*bedrockruntime.Client, string, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("load the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, "", errNoRegion
	}
	if cfg.Credentials == nil {
		return nil, "", errNoCredentials
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	creds, err := cfg.Credentials.Retrieve(cctx)
	if err != nil || !creds.HasKeys() {
		if err != nil {
			return nil, "", fmt.Errorf("%w: %v", errNoCredentials, err)
		}
		return nil, "", errNoCredentials
	}
	return bedrockruntime.NewFromConfig(cfg), cfg.Region, nil
}
