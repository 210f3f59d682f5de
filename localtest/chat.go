package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
)

// localChatModel is the model ID the chat sends to the Converse stand-in.
const localChatModel = "usermemory-local-chat"

// exampleChatModel is the chat model the hints name for --bedrock: a
// current model of docs/extractor.md's list, which a test holds them to.
const exampleChatModel = "us.anthropic.claude-haiku-4-5-20251001-v1:0"

// defaultChatWait is how long the chat waits, by default (-wait), for the
// extractor after an answer that is due for an extraction.
const defaultChatWait = 15 * time.Second

const chatHelp = `Type a message, or:
  /new          start a new thread (its system prompt shows what was learned)
  /prompt       show the system prompt the next answer will get
  /facts        list what is remembered about you
  /forget KEY   forget one fact
  /pending      list the sensitive facts waiting for your yes
  /keep KEY     keep a pending fact: from then on it is in every prompt
  /discard KEY  discard a pending fact
  /quit         leave (or Ctrl-D)
Say "remember that my role is nurse" to see the remember tool ask for approval.
A fact about your health, religion or politics waits as pending until you /keep it.
`

// chat plays the AI gateway in the terminal, with the gateway package
// wired to the running stack: the facts in its table, the extraction
// messages to its queue, the answers from its Converse stand-in (or from
// Bedrock with -bedrock).
func chat(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := newFlags("chat", "[-state DIR] --tenant acme --user ana [--bedrock --model-id ID [--region R]]")
	state := fs.stateDir()
	tenant := fs.String("tenant", "acme", "tenant ID")
	user := fs.String("user", "ana", "user ID")
	useBedrock := fs.Bool("bedrock", false, "answer with Amazon Bedrock (the default AWS credentials and region) instead of the stand-in")
	modelID := fs.String("model-id", "", "the chat model (or inference profile) ID; required with -bedrock")
	region := fs.String("region", "", "the Region of the model, with -bedrock (default: the AWS configuration's)")
	wait := fs.Duration("wait", defaultChatWait, "how long to wait for the extractor after an answer that is due for an extraction")
	if err := fs.parse(args, false); err != nil {
		return err
	}
	if *useBedrock && *modelID == "" {
		return fs.errorf("with -bedrock, -model-id names the chat model, for instance -model-id %s", exampleChatModel)
	}
	// Bedrock's credentials and Region are checked before the chat starts,
	// not at its first message.
	var bedrockCfg aws.Config
	if *useBedrock {
		var err error
		if bedrockCfg, err = awslive.Config(ctx, "-bedrock", *region); err != nil {
			return err
		}
	}
	sc := memory.Scope{TenantID: *tenant, UserID: *user}
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("-tenant and -user: %w", err)
	}
	info, err := stack.ReadInfo(*state)
	if err != nil {
		return err
	}
	// The stack's table and queue, as the functions see them.
	settings, err := setup.FromEnv(func(k string) string { return info.ExtractorEnv[k] })
	if err != nil {
		return err
	}
	local := info.AWSConfig()
	// DynamoDB through the stack's serialising endpoint, as the functions.
	ddb := dynamodb.NewFromConfig(local, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(info.DynamoDBURL) })
	queue := sqs.NewFromConfig(local, func(o *sqs.Options) { o.BaseEndpoint = aws.String(info.SQSURL) })
	store, err := memory.New(dynamorepo.New(ddb, settings.TableName), settings.Memory, setup.StoreOptions()...)
	if err != nil {
		return err
	}
	model := bedrockruntime.NewFromConfig(local, func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(info.BedrockURL) })
	from := "the Bedrock stand-in at " + info.BedrockURL
	if *useBedrock {
		model = bedrockruntime.NewFromConfig(bedrockCfg)
		from = "Amazon Bedrock in " + bedrockCfg.Region
	} else if *modelID == "" {
		*modelID = localChatModel
	}
	gw, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(queue, info.QueueURL), Model: model, ModelID: *modelID})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Answers come from %s (model %s); facts, queue and extractor from the local stack.\n", from, *modelID)
	c := &chatSession{gw: gw, store: store, queue: queue, queueURL: info.QueueURL, sc: sc, wait: *wait,
		in: bufio.NewScanner(in), out: out, echo: !isTerminal(in)}
	return c.run(ctx)
}

type chatSession struct {
	gw       *gateway.Gateway
	store    *memory.Store
	queue    *sqs.Client
	queueURL string
	sc       memory.Scope
	wait     time.Duration
	in       *bufio.Scanner
	out      io.Writer
	// echo repeats each input line, so that a session scripted on
	// standard input reads as a conversation.
	echo    bool
	thread  *gateway.Thread
	threads int
}

// read reads one line of input.
func (c *chatSession) read() (string, bool) {
	if !c.in.Scan() {
		fmt.Fprintln(c.out)
		return "", false
	}
	line := strings.TrimSpace(c.in.Text())
	if c.echo {
		fmt.Fprintln(c.out, line)
	}
	return line, true
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (c *chatSession) run(ctx context.Context) error {
	fmt.Fprintf(c.out, "Chatting as user %s of tenant %s. /help lists the commands.\n", c.sc.UserID, c.sc.TenantID)
	if err := c.newThread(ctx); err != nil {
		return err
	}
	for {
		fmt.Fprint(c.out, "you> ")
		line, ok := c.read()
		if !ok {
			return c.in.Err()
		}
		cmd, arg, _ := strings.Cut(line, " ")
		var err error
		switch cmd {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		case "/help":
			fmt.Fprint(c.out, chatHelp)
		case "/new":
			err = c.newThread(ctx)
		case "/prompt":
			var p string
			if p, err = c.gw.SystemPrompt(ctx, c.sc); err == nil {
				fmt.Fprintf(c.out, "system prompt of the next answer:\n%s\n", indent(p))
			}
		case "/facts":
			err = c.printFacts(ctx)
		case "/forget", "/keep", "/discard":
			err = c.keyCommand(ctx, cmd, strings.TrimSpace(arg))
		case "/pending":
			err = c.printPending(ctx, true)
		default:
			if strings.HasPrefix(cmd, "/") {
				fmt.Fprintf(c.out, "unknown command %s; /help lists the commands\n", cmd)
				continue
			}
			err = c.ask(ctx, line)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintln(c.out, "error:", err)
		}
	}
}

func (c *chatSession) newThread(ctx context.Context) error {
	c.threads++
	c.thread = c.gw.NewThread(c.sc, "chat-"+strconv.FormatInt(time.Now().Unix(), 36)+"-"+strconv.Itoa(c.threads))
	p, err := c.gw.SystemPrompt(ctx, c.sc)
	if err != nil {
		return err
	}
	block := "(no memory yet: the prompt has no <user_memory> block)"
	if i := strings.Index(p, memory.MemoryOpen); i >= 0 {
		block = p[i:]
	}
	fmt.Fprintf(c.out, "thread %s; its system prompt holds:\n%s\n", c.thread.ID, indent(block))
	return nil
}

func (c *chatSession) ask(ctx context.Context, text string) error {
	before, err := c.store.GetFacts(ctx, c.sc)
	if err != nil {
		return err
	}
	reply, err := c.gw.Ask(ctx, c.thread, text, c.approve)
	for _, t := range reply.Tools {
		switch {
		case t.Err != nil:
			fmt.Fprintf(c.out, "  [tool %s refused: %v]\n", t.Call.Name, t.Err)
		default:
			fmt.Fprintf(c.out, "  [tool %s: %s]\n", t.Call.Name, t.Result)
		}
	}
	if reply.Text != "" {
		fmt.Fprintf(c.out, "assistant> %s\n", reply.Text)
	}
	if err != nil {
		return err
	}
	if !reply.ExtractDue {
		fmt.Fprintf(c.out, "  (extraction message sent; no extraction is due at turn %d, so the extractor calls no model)\n", c.thread.TurnCount())
		return nil
	}
	if err := c.waitForExtractor(ctx); err != nil {
		return err
	}
	after, err := c.store.GetFacts(ctx, c.sc)
	if err != nil {
		return err
	}
	changes := diff(before, after)
	if len(changes) == 0 {
		fmt.Fprintln(c.out, "  (the extractor learned nothing new)")
	} else {
		fmt.Fprintf(c.out, "  memory: %s\n", strings.Join(changes, ", "))
	}
	return c.printPending(ctx, false)
}

// keyCommand runs /forget, /keep or /discard on key.
func (c *chatSession) keyCommand(ctx context.Context, cmd, key string) error {
	if key == "" {
		fmt.Fprintf(c.out, "usage: %s KEY (see /facts and /pending)\n", cmd)
		return nil
	}
	canonical := memory.CanonicalKey(key)
	switch cmd {
	case "/forget":
		if err := c.store.RemoveFact(ctx, c.sc, key); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "forgot %s\n", canonical)
	case "/keep":
		f, err := c.gw.Keep(ctx, c.sc, key)
		if memory.ErrorCode(err) == memory.CodePendingNotFound {
			fmt.Fprintf(c.out, "nothing waits under %s (see /pending)\n", canonical)
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.out, "kept %s = %s: it is in the prompt from the next answer on\n", f.Key, f.Value)
	case "/discard":
		if err := c.gw.Discard(ctx, c.sc, key); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "discarded %s\n", canonical)
	}
	return nil
}

// printPending lists the pending facts with what the user said and when
// each is dropped; always says so when there is none, else only when
// there is some.
func (c *chatSession) printPending(ctx context.Context, always bool) error {
	pending, err := c.gw.Pending(ctx, c.sc)
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		if always {
			fmt.Fprintln(c.out, "nothing waits for your yes")
		}
		return nil
	}
	fmt.Fprintln(c.out, "  waiting for your yes (not in any prompt until you /keep KEY; /discard KEY drops it):")
	for _, p := range pending {
		fmt.Fprintf(c.out, "    %s = %s [%s]%s; dropped %s\n", p.Key, p.Value, p.Category, said(p.Fact),
			p.Until.Local().Format("Mon 2 Jan 15:04"))
	}
	return nil
}

// said is what a fact rests on, for the terminal: the user's words, or
// nothing for a fact set by hand.
func said(f memory.Fact) string {
	if f.Evidence == "" {
		return ""
	}
	return ", you said “" + f.Evidence + "”"
}

// approve asks the user, on the same input, whether a tool may run.
func (c *chatSession) approve(_ context.Context, call memory.ToolCall) bool {
	fmt.Fprintf(c.out, "  The assistant wants to %s %s. Allow? [y/N] ", call.Name, call.Input)
	answer, _ := c.read()
	answer = strings.ToLower(answer)
	return answer == "y" || answer == "yes"
}

// waitForExtractor waits until the queue holds no message, visible or in
// flight: the extractor has then processed the one just sent. Past
// c.wait it says so and lets the chat go on.
func (c *chatSession) waitForExtractor(ctx context.Context) error {
	err := stack.WaitDrained(ctx, c.queue, c.queueURL, c.wait)
	if errors.Is(err, stack.ErrNotDrained) {
		fmt.Fprintf(c.out, "  (the extractor has not finished after %s; /facts shows what it learned so far)\n", c.wait)
		return nil
	}
	return err
}

func (c *chatSession) printFacts(ctx context.Context) error {
	facts, err := c.store.GetFacts(ctx, c.sc)
	if err != nil {
		return err
	}
	if len(facts) == 0 {
		fmt.Fprintln(c.out, "nothing remembered")
	}
	for _, f := range facts {
		until := ""
		if !f.ValidUntil.IsZero() {
			until = ", until " + f.ValidUntil.Format("Mon 2 Jan")
		}
		fmt.Fprintf(c.out, "  %s = %s (%s%s%s)\n", f.Key, f.Value, f.UpdatedAt.Local().Format("2006-01-02 15:04"), until, said(f))
	}
	return nil
}

// diff says what changed from before to after: +key = value, ~key = value,
// -key.
func diff(before, after []memory.Fact) []string {
	old := map[string]string{}
	for _, f := range before {
		old[f.Key] = f.Value
	}
	var out []string
	for _, f := range after {
		v, ok := old[f.Key]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("learned %s = %s", f.Key, f.Value))
		case v != f.Value:
			out = append(out, fmt.Sprintf("updated %s = %s", f.Key, f.Value))
		}
		delete(old, f.Key)
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		out = append(out, "forgot "+k)
	}
	return out
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
