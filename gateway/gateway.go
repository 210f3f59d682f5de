// Package gateway shows how an AI chat gateway uses usermemory, in the
// fewest lines that do it right. It is the example gateway teams read, and
// the gateway that `go run ./localtest chat` runs in a terminal.
//
// For every user message of a thread, [Gateway.Ask]:
//
//  1. reads the user's facts and renders them with memory.RenderMemory into
//     the {memory} slot of the system prompt, so that every thread knows what
//     earlier threads learned;
//  2. calls the chat model through Bedrock's Converse API, offering it the
//     memory tools of memory.UserTools (remember one fact, forget one);
//  3. runs the tool calls with memory.Store.ExecuteTool, asking the user
//     first for every tool that needs approval (remember_user_fact): a call
//     the user did not approve is refused by the store itself and the model
//     is told so;
//  4. after the answer, sends the extraction message with the producer
//     package, so that the extractor learns the facts the user stated: the
//     turns since the last extraction, and the turns before them as
//     context, so that a "yes" is read with the question it answers; and
//     the thread's title, so that the memory page names the thread a fact
//     came from as a person knows it.
//
// The extractor keeps a fact of a special category (health, religion…) as
// pending: it is in no prompt (step 1 reads the facts only) until the user
// says yes. After an answer that was due for an extraction, a host lists
// them with [Gateway.Pending] and offers the user [Gateway.Keep] and
// [Gateway.Discard]; the model is never asked, for it is the user's
// consent.
//
// When the user deletes a chat, a host calls [Gateway.ForgetThread]: what
// the chat taught goes, and none of its messages still on their way brings
// it back.
//
// The memory never stops an answer: the read of the facts and the send of
// the extraction message are retried with backoff and jitter, honouring a
// Retry-After, within the bounds of [RetryPolicy] and the caller's context;
// a read that still fails gives the prompt the facts last read for the
// user (within Config.LastKnown) or none, and the error goes to
// Config.OnMemoryError (Config.StrictMemory returns it instead).
//
// The gateway reads and edits the facts through the Go packages (a
// memory.Store over dynamorepo), not through the HTTP API: it runs in the
// same AWS account as the table, it reads the facts before every model call
// (one DynamoDB GetItem, with no API Gateway and Lambda hop in front of the
// user's answer), and the approval of the remember tool is then enforced by
// memory.Store.ExecuteTool rather than re-implemented. It needs
// dynamodb:GetItem, PutItem and UpdateItem on the table and sqs:SendMessage
// on the queue, and the same memory.Config as the functions (the template's
// MaxFacts and MaxFactChars). The frontend's "what do you know about me"
// page keeps using the HTTP API with the user's token.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
)

// MemorySlot is the placeholder of the system prompt that the rendered
// facts replace.
const MemorySlot = "{memory}"

// DefaultSystemPrompt is the system prompt of a gateway configured without
// one.
const DefaultSystemPrompt = "You are a helpful assistant. Use what you know about the user when it helps; " +
	"call remember_user_fact only when the user asks you to remember something.\n" + MemorySlot

// DefaultMaxToolRounds bounds the model calls of one user message that
// answer tool calls.
const DefaultMaxToolRounds = 4

// ChatModel is the part of *bedrockruntime.Client the gateway calls.
type ChatModel interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// Approver asks the user whether a tool call that needs approval may run;
// it returns true when the user agreed.
type Approver func(ctx context.Context, call memory.ToolCall) bool

// Config is what a [Gateway] needs. Store, Producer, Model and ModelID are
// required.
type Config struct {
	// Store reads and edits the facts: memory.New over dynamorepo.New.
	Store *memory.Store
	// Producer sends the extraction message to the queue.
	Producer *producer.Producer
	// Imports sends the message of an import to the extraction queue
	// ([Gateway.Import]); nil refuses imports. Optional.
	Imports *ImportQueue
	// Model is the chat model's client and ModelID its model (or
	// inference profile) ID.
	Model   ChatModel
	ModelID string
	// SystemPrompt holds [MemorySlot] once; "" means [DefaultSystemPrompt].
	SystemPrompt string
	// MaxToolRounds bounds the tool rounds of one message; 0 means
	// [DefaultMaxToolRounds].
	MaxToolRounds int
	// Retry bounds the retries of the reads of the facts and of the
	// sends of the extraction message; zero fields take
	// [DefaultRetryPolicy]'s.
	Retry RetryPolicy
	// StrictMemory makes [Gateway.SystemPrompt] (and so Ask) fail when
	// the facts cannot be read, instead of answering with the facts last
	// read within LastKnown, or none, and reporting the error (the
	// default: the user's answer goes out while the memory is down).
	StrictMemory bool
	// LastKnown is how long the facts last read for a user may stand in
	// for a read that failed; 0 means [DefaultLastKnown], a negative
	// value never.
	LastKnown time.Duration
	// OnMemoryError is told of each read the prompt went without and
	// each extraction message that could not be sent; nil logs them with
	// slog's default logger.
	OnMemoryError func(context.Context, MemoryError)
}

// Gateway plays the part of the AI gateway for one model. It is safe for
// concurrent use by several threads; one [Thread] is used by one
// goroutine at a time.
type Gateway struct {
	cfg   Config
	tools *types.ToolConfiguration
	needs map[string]bool
	retry RetryPolicy
	known knownFacts
}

// New returns a Gateway. It returns an error when a required field of cfg
// is missing or the system prompt has no {memory} slot.
func New(cfg Config) (*Gateway, error) {
	switch {
	case cfg.Store == nil, cfg.Producer == nil, cfg.Model == nil:
		return nil, errors.New("gateway: Store, Producer and Model are required")
	case cfg.ModelID == "":
		return nil, errors.New("gateway: ModelID is required")
	}
	if cfg.SystemPrompt == "" {
		cfg.SystemPrompt = DefaultSystemPrompt
	}
	if strings.Count(cfg.SystemPrompt, MemorySlot) != 1 {
		return nil, fmt.Errorf("gateway: the system prompt must hold %s once", MemorySlot)
	}
	if cfg.MaxToolRounds <= 0 {
		cfg.MaxToolRounds = DefaultMaxToolRounds
	}
	if cfg.LastKnown == 0 {
		cfg.LastKnown = DefaultLastKnown
	}
	g := &Gateway{cfg: cfg, tools: &types.ToolConfiguration{}, needs: map[string]bool{}, retry: cfg.Retry.withDefaults()}
	for _, def := range memory.UserTools() {
		t, err := bedrock.ConverseTool(def)
		if err != nil {
			return nil, err
		}
		g.tools.Tools = append(g.tools.Tools, t)
		g.needs[def.Name] = def.NeedsApproval
	}
	return g, nil
}

// Thread is one conversation of one user. Its turns live in the gateway
// (the service keeps facts, not conversations).
type Thread struct {
	// ID names the thread in the extraction message and as the source
	// of the facts learned from it.
	ID string
	// Scope is the user the thread belongs to.
	Scope memory.Scope
	// Title names the thread for people: the extraction message's
	// threadTitle, kept with the facts learned from the thread and shown
	// on the memory page instead of the ID. A host that names its threads
	// sets it; when it is empty, the first Ask sets it to [TitleOf] the
	// user's first message.
	Title string

	messages []types.Message
	turns    []producer.Turn
	// extracted is the turn count of the last message that was due for
	// an extraction: the turns after it are the ones to send.
	extracted int
}

// NewThread starts thread id of the user of sc.
func (g *Gateway) NewThread(sc memory.Scope, id string) *Thread {
	return &Thread{ID: id, Scope: sc}
}

// titleWords is how many words of a first message [TitleOf] keeps.
const titleWords = 6

// TitleOf returns a thread title made of the first words of text (a
// thread's first user message), on one line, at most
// memory.MaxThreadTitleChars characters, with "…" when words were left
// out; "" for a text with no word.
func TitleOf(text string) string {
	words := strings.Fields(memory.CleanThreadTitle(strings.Join(strings.Fields(text), " ")))
	cut := len(words) > titleWords
	words = words[:min(len(words), titleWords)]
	title := strings.Join(words, " ")
	if limit := memory.MaxThreadTitleChars - 1; len([]rune(title)) > limit {
		title, cut = string([]rune(title)[:limit]), true
	}
	if cut {
		title = strings.TrimRight(title, " ,.;:!?") + "…"
	}
	return title
}

// TurnCount returns the number of turns of the thread so far.
func (t *Thread) TurnCount() int { return len(t.turns) }

// SystemPrompt reads the user's facts and returns the system prompt with
// them in its {memory} slot (empty when there is none). The read is
// retried by Config.Retry; when it still fails, the prompt holds the facts
// last read within Config.LastKnown, or none, and the error goes to
// Config.OnMemoryError. Errors: ctx's, or with Config.StrictMemory those
// of memory.Store.GetFacts.
func (g *Gateway) SystemPrompt(ctx context.Context, sc memory.Scope) (string, error) {
	facts, err := g.readFacts(ctx, sc)
	if err != nil {
		return "", err
	}
	return strings.Replace(g.cfg.SystemPrompt, MemorySlot, memory.RenderMemory(facts), 1), nil
}

// ToolRun is one tool call of the model and what came of it.
type ToolRun struct {
	// Call is the tool and its input, as the model sent them.
	Call memory.ToolCall
	// Approved says the user approved it (always false for a tool that
	// needs no approval and was not asked about).
	Approved bool
	// Result is what the model was told: the tool's text, or the error.
	Result string
	// Err is the tool's error, nil when it ran.
	Err error
}

// Reply is the outcome of one user message.
type Reply struct {
	// Text is the model's answer.
	Text string
	// System is the system prompt the model was called with.
	System string
	// Tools are the tool calls the model made, in order.
	Tools []ToolRun
	// ExtractDue says the extraction message sent after this answer asks
	// for an extraction (memory.Store.IsExtractDue).
	ExtractDue bool
}

// Ask sends the user's text to the model in thread t and returns the
// answer. approve is asked about every tool call that needs approval; nil
// approves none. After the answer it sends the extraction message,
// retried by Config.Retry. Errors: those of [Gateway.SystemPrompt], of the
// model call, and of the producer after the retries (the answer is then
// returned too: the user saw it; the error also goes to
// Config.OnMemoryError).
func (g *Gateway) Ask(ctx context.Context, t *Thread, text string, approve Approver) (Reply, error) {
	system, err := g.SystemPrompt(ctx, t.Scope)
	if err != nil {
		return Reply{}, err
	}
	reply := Reply{System: system}
	if t.Title == "" {
		t.Title = TitleOf(text)
	}
	previous, sent := len(t.turns), len(t.messages)
	t.messages = append(t.messages, types.Message{Role: types.ConversationRoleUser,
		Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}})
	t.turns = append(t.turns, producer.Turn{Role: memory.RoleUser, Text: text})

	for round := 0; ; round++ {
		out, err := g.cfg.Model.Converse(ctx, &bedrockruntime.ConverseInput{
			ModelId:    aws.String(g.cfg.ModelID),
			System:     []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: system}},
			Messages:   t.messages,
			ToolConfig: g.tools,
		})
		if err != nil {
			// Forget the message, so that the user may send it again.
			t.messages, t.turns = t.messages[:sent], t.turns[:previous]
			return Reply{}, fmt.Errorf("gateway: model: %w", err)
		}
		msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
		if !ok {
			t.messages, t.turns = t.messages[:sent], t.turns[:previous]
			return Reply{}, errors.New("gateway: the model answered without a message")
		}
		t.messages = append(t.messages, msg.Value)
		answer, uses := split(msg.Value)
		if answer != "" {
			t.turns = append(t.turns, producer.Turn{Role: memory.RoleAssistant, Text: answer})
		}
		if out.StopReason != types.StopReasonToolUse || len(uses) == 0 {
			reply.Text = answer
			break
		}
		if round == g.cfg.MaxToolRounds {
			// Still calling tools: stop, and keep the thread one that the
			// model accepts next time (every tool use answered), by
			// keeping the user's message and the text of the answer only.
			reply.Text = answer
			t.messages = append(t.messages[:sent+1], types.Message{Role: types.ConversationRoleAssistant,
				Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: or(answer, "(no answer)")}}})
			break
		}
		results := g.runTools(ctx, t, uses, approve)
		for _, run := range results {
			reply.Tools = append(reply.Tools, run.ToolRun)
		}
		t.messages = append(t.messages, toolResults(results))
	}

	reply.ExtractDue, err = g.send(ctx, t, previous)
	return reply, err
}

// send sends the extraction message after every answer: one message to
// the queue, with the turns since the last extraction and, as context,
// the turns before them (the producer keeps the newest the extractor
// reads); the extractor decides what to learn. It reports whether the
// message is due for extraction, and then marks the turns extracted.
func (g *Gateway) send(ctx context.Context, t *Thread, previous int) (due bool, err error) {
	due = g.cfg.Store.IsExtractDue(previous, len(t.turns))
	m := producer.Message{
		TenantID: t.Scope.TenantID, UserID: t.Scope.UserID, ThreadID: t.ID, ThreadTitle: t.Title,
		PreviousTurnCount: previous, TurnCount: len(t.turns), Turns: t.turns[t.extracted:],
		ContextTurns: t.turns[:t.extracted],
	}
	// The FIFO queue drops a copy of the same message: sending again is safe.
	err = g.retry.do(ctx, func(ctx context.Context) error { return g.cfg.Producer.Send(ctx, m) })
	if err != nil && ctx.Err() == nil {
		g.report(ctx, MemoryError{Scope: t.Scope, Op: "send", Err: err, Served: "returned"})
	}
	if due {
		t.extracted = len(t.turns)
	}
	return due, err
}

// toolAnswer is a tool run and the use it answers.
type toolAnswer struct {
	ToolRun
	useID *string
}

// runTools runs the tool uses of one answer, in order, and records each
// as a tool turn of t.
func (g *Gateway) runTools(ctx context.Context, t *Thread, uses []types.ToolUseBlock, approve Approver) []toolAnswer {
	out := make([]toolAnswer, 0, len(uses))
	for _, use := range uses {
		run := g.runTool(ctx, t.Scope, use, approve)
		t.turns = append(t.turns, producer.Turn{Role: memory.RoleTool, Text: run.Call.Name + ": " + run.Result})
		out = append(out, toolAnswer{ToolRun: run, useID: use.ToolUseId})
	}
	return out
}

// toolResults is the user message that answers every tool use of runs.
func toolResults(runs []toolAnswer) types.Message {
	results := make([]types.ContentBlock, 0, len(runs))
	for _, run := range runs {
		status := types.ToolResultStatusSuccess
		if run.Err != nil {
			status = types.ToolResultStatusError
		}
		results = append(results, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: run.useID, Status: status,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: run.Result}},
		}})
	}
	return types.Message{Role: types.ConversationRoleUser, Content: results}
}

// runTool runs one tool call, asking approve first when the tool needs it.
// The store refuses a remember call that was not approved.
func (g *Gateway) runTool(ctx context.Context, sc memory.Scope, use types.ToolUseBlock, approve Approver) ToolRun {
	call, err := bedrock.ToolCall(use)
	if err != nil {
		return ToolRun{Call: memory.ToolCall{Name: aws.ToString(use.Name)}, Result: "error: " + err.Error(), Err: err}
	}
	run := ToolRun{Call: call}
	if g.needs[call.Name] && approve != nil {
		run.Approved = approve(ctx, call)
	}
	g.known.drop(sc)
	res, err := g.cfg.Store.ExecuteTool(ctx, sc, call, run.Approved)
	if err != nil {
		run.Err = err
		run.Result = "error: " + err.Error()
		if memory.ErrorCode(err) == memory.CodeApprovalRequired {
			run.Result = "error: the user did not allow it"
		}
		return run
	}
	run.Result = res.Text
	return run
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// split returns the text of a message and its tool uses.
func split(m types.Message) (string, []types.ToolUseBlock) {
	var text []string
	var uses []types.ToolUseBlock
	for _, c := range m.Content {
		switch b := c.(type) {
		case *types.ContentBlockMemberText:
			text = append(text, b.Value)
		case *types.ContentBlockMemberToolUse:
			uses = append(uses, b.Value)
		}
	}
	return strings.TrimSpace(strings.Join(text, "\n")), uses
}
