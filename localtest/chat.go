package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
  /new               start a new thread (its system prompt shows what was learned)
  /prompt            show the system prompt the next answer will get
  /facts             list what is remembered about you
  /forget KEY        forget one fact
  /forget-thread     forget what this thread taught (its older messages bring none of it back)
  /undo              undo what the last answer's extraction changed ("Memory updated")
  /pending           list the sensitive facts waiting for your yes
  /keep KEY|CAT      keep a pending fact (by its key, or by its category when
                     one pending fact has it): from then on it is in every prompt
  /discard KEY|CAT   discard a pending fact
  /import FILE [SOURCE]
                     import what another assistant remembers (its list in FILE;
                     /import alone shows what to ask it): every fact waits for review
  /keep all          keep every fact of the last import that waits
  /discard all       discard them (importing the same list again does not propose them)
  /quit              leave (or Ctrl-D)
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
	gw, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(queue, info.QueueURL),
		Imports: gateway.NewImportQueue(queue, info.QueueURL), Model: model, ModelID: *modelID})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Answers come from %s (model %s); facts, queue and extractor from the local stack.\n", from, *modelID)
	c := &chatSession{gw: gw, store: store, queue: queue, queueURL: info.QueueURL, sc: sc, wait: *wait,
		in: bufio.NewScanner(in), out: out, echo: !isTerminal(in), idleRead: idleReadOf(info.ExtractorEnv)}
	c.extracted = c.waitForExtractor
	c.importRead = c.waitForExtractor
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
	// extracted waits for the extraction of the message just sent and
	// reports whether it finished (false: still running after c.wait).
	extracted func(context.Context) (bool, error)
	// idleRead is when a thread's unread turns are read once it is idle:
	// the extractor's IDLE_READ_SECONDS as a duration, 0 when it is off,
	// -1 when the stack does not say.
	idleRead time.Duration
	// loc is the time zone of the times shown; nil for the machine's.
	loc *time.Location
	// updated are the changes the last extraction made ("Memory
	// updated"), in the thread undoThread, which /undo undoes.
	updated    []memory.Change
	undoThread *gateway.Thread
	// importRead waits until the extractor read the import just sent and
	// reports whether it did (false: still reading after c.wait).
	importRead func(context.Context) (bool, error)
	// lastImport is the ID of the session's last import, and lastSource
	// its source: /keep all and /discard all act on it.
	lastImport, lastSource string
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
		case "/forget-thread":
			err = c.forgetThread(ctx)
		case "/undo":
			err = c.undo(ctx)
		case "/pending":
			err = c.printPending(ctx, true)
		case "/import":
			err = c.importFile(ctx, arg)
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

// approve asks the user, on the same input, whether a tool may run.
func (c *chatSession) approve(_ context.Context, call memory.ToolCall) bool {
	fmt.Fprintf(c.out, "  The assistant wants to %s %s. Allow? [y/N] ", call.Name, call.Input)
	answer, _ := c.read()
	answer = strings.ToLower(answer)
	return answer == "y" || answer == "yes"
}

// waitForExtractor waits until the queue holds no message, visible or in
// flight: the extractor has then processed the one just sent. Past
// c.wait it says so, reports false, and lets the chat go on.
func (c *chatSession) waitForExtractor(ctx context.Context) (bool, error) {
	err := stack.WaitDrained(ctx, c.queue, c.queueURL, c.wait)
	if errors.Is(err, stack.ErrNotDrained) {
		fmt.Fprintf(c.out, "  (the extractor has not finished after %s; /facts and /pending show what it learned so far)\n", c.wait)
		return false, nil
	}
	return err == nil, err
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
