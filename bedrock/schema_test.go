package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// textAnswer is an API whose model answers every call with the same text,
// as a model in OutputJSON mode does.
type textAnswer struct{ text string }

func (a textAnswer) Converse(context.Context, *bedrockruntime.ConverseInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	return &bedrockruntime.ConverseOutput{
		StopReason: types.StopReasonEndTurn,
		Output: &types.ConverseOutputMemberMessage{Value: types.Message{Role: types.ConversationRoleAssistant,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: a.text}}}},
		Usage: &types.TokenUsage{InputTokens: aws.Int32(10), OutputTokens: aws.Int32(5)},
	}, nil
}

// Classes of input on which the schema given to the model and the
// pipeline that reads its answer (memory.ParseOperations in this package,
// then the store's checks) differ on purpose.
const (
	// cut: a key, value or evidence over maxLength. The schema refuses it;
	// the store cuts it at a rune boundary, as docs/decisions.md says of an
	// extracted fact (evidence at the end of a word, so that it is still a
	// span of the turn).
	cut = "cut to maxFactChars"
	// normalised: an op in another case or with white space around it. The
	// schema's enum refuses it; the store reads it as SET or DELETE.
	normalised = "op normalised"
	// memberCase: a member name in another case ("Key"). additionalProperties
	// refuses it; encoding/json matches names without regard to case.
	memberCase = "member name case"
	// nullValue: "value": null. The schema wants a string; the decoder
	// leaves the value empty, which a DELETE does not read (a SET with an
	// empty value is refused all the same).
	nullValue = "null value of a DELETE"
	// noEvidence: an operation without evidence. The schema requires it of
	// every operation (JSON Schema without if/then, which not every model
	// family takes, cannot require it of SETs only); the pipeline reads a
	// DELETE without it, and leaves a SET without it out as unsupported,
	// writing nothing of it.
	noEvidence = "no evidence"
	// otherCategory: a category outside memory.Categories. The schema's
	// enum refuses it; the store ignores it and judges the category by its
	// own rules (memory.SensitiveCategory).
	otherCategory = "category not in the enum"
	// storeRule: a SET without a value (the schema requires op, key and
	// evidence only), a key with no letter or digit, a value that is only
	// white space, an end date that is no date. The schema accepts it; the
	// store refuses the answer, since the value, the canonical key or the
	// clean value is empty, or validUntil is not YYYY-MM-DD.
	storeRule = "refused by the store's rules"
)

// TestStoreRefusesWhatTheSchemaRefuses holds the pipeline to the schema of
// the operations tool, which the library checks here (only here: the
// functions do not link it): every input the schema accepts is merged as
// it says, every input it refuses is a bad answer that writes nothing,
// except for the classes above, where the test says what happens instead.
func TestStoreRefusesWhatTheSchemaRefuses(t *testing.T) {
	const maxOps, maxChars = 3, 16
	tool := memory.OperationsTool(maxOps, maxChars, true)
	sch := compileTool(t, tool)

	long := strings.Repeat("é", maxChars+1)
	// Every SET quotes the user's turn (ev), unless the case is about its
	// evidence.
	const turn = "I'm Ana, and I like long walks by the sea at dawn, long dinners with friends, long books about old ships, " +
		"long trains across the mountains, and long letters written by hand to people I have not seen for years."
	const ev = `,"evidence":"I'm Ana"`
	tests := []struct {
		name, input string
		class       string            // "" when the schema and the pipeline agree
		want        map[string]string // the facts after an accepted input
	}{
		{"empty list", `{"operations":[]}`, "", map[string]string{}},
		{"one set", `{"operations":[{"op":"SET","key":"name","value":"Ana"` + ev + `}]}`, "", map[string]string{"name": "Ana"}},
		{"set then delete", `{"operations":[{"op":"SET","key":"name","value":"Ana"` + ev + `},{"op":"DELETE","key":"name"` + ev + `}]}`, "", map[string]string{}},
		{"delete with a value", `{"operations":[{"op":"DELETE","key":"name","value":"x"` + ev + `}]}`, "", map[string]string{}},
		{"key made canonical", `{"operations":[{"op":"SET","key":"Home City","value":" Lisbon "` + ev + `}]}`, "", map[string]string{"home_city": "Lisbon"}},
		{"as many as allowed", `{"operations":[{"op":"SET","key":"a","value":"1"` + ev + `},{"op":"SET","key":"b","value":"2"` + ev + `},{"op":"SET","key":"c","value":"3"` + ev + `}]}`,
			"", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"key of maxLength", `{"operations":[{"op":"SET","key":"` + long[2:] + `","value":"v"` + ev + `}]}`, "", map[string]string{long[2:]: "v"}},
		{"white space around", " \n" + `{"operations":[]}` + "\n ", "", map[string]string{}},
		{"evidence not in the turn", `{"operations":[{"op":"SET","key":"name","value":"Bob","evidence":"I'm Bob"}]}`, "", map[string]string{}},
		{"evidence with an ellipsis", `{"operations":[{"op":"SET","key":"name","value":"Ana","evidence":"I'm Ana… long walks"}]}`, "", map[string]string{"name": "Ana"}},
		{"an end date", `{"operations":[{"op":"SET","key":"name","value":"Ana","validUntil":"` + time.Now().UTC().AddDate(0, 1, 0).Format(time.DateOnly) + `"` + ev + `}]}`, "", map[string]string{"name": "Ana"}},
		{"a special category", `{"operations":[{"op":"SET","key":"name","value":"Ana","category":"health"` + ev + `}]}`, "", map[string]string{}},

		{"not JSON", `{"operations":[`, "", nil},
		{"an array", `[]`, "", nil},
		{"a string", `"SET name Ana"`, "", nil},
		{"null", `null`, "", nil},
		{"no operations", `{}`, "", nil},
		{"operations null", `{"operations":null}`, "", nil},
		{"operations an object", `{"operations":{"op":"SET"}}`, "", nil},
		{"operations a string", `{"operations":"none"}`, "", nil},
		{"extra top member", `{"operations":[],"note":"x"}`, "", nil},
		{"trailing data", `{"operations":[]} {}`, "", nil},
		{"too many", `{"operations":[{"op":"DELETE","key":"a"` + ev + `},{"op":"DELETE","key":"b"` + ev + `},{"op":"DELETE","key":"c"` + ev + `},{"op":"DELETE","key":"d"` + ev + `}]}`, "", nil},
		{"item a string", `{"operations":["SET name Ana"]}`, "", nil},
		{"item null", `{"operations":[null]}`, "", nil},
		{"item an array", `{"operations":[["SET","name","Ana"]]}`, "", nil},
		{"no op", `{"operations":[{"key":"name","value":"Ana"` + ev + `}]}`, "", nil},
		{"op null", `{"operations":[{"op":null,"key":"name","value":"Ana"` + ev + `}]}`, "", nil},
		{"op a number", `{"operations":[{"op":1,"key":"name","value":"Ana"` + ev + `}]}`, "", nil},
		{"unknown op", `{"operations":[{"op":"UPSERT","key":"name","value":"Ana"` + ev + `}]}`, "", nil},
		{"no key", `{"operations":[{"op":"SET","value":"Ana"` + ev + `}]}`, "", nil},
		{"empty key", `{"operations":[{"op":"SET","key":"","value":"Ana"` + ev + `}]}`, "", nil},
		{"key null", `{"operations":[{"op":"SET","key":null,"value":"Ana"` + ev + `}]}`, "", nil},
		{"key a number", `{"operations":[{"op":"SET","key":7,"value":"Ana"` + ev + `}]}`, "", nil},
		{"set without value", `{"operations":[{"op":"SET","key":"name"` + ev + `}]}`, storeRule, nil},
		{"set with null value", `{"operations":[{"op":"SET","key":"name","value":null` + ev + `}]}`, "", nil},
		{"value a number", `{"operations":[{"op":"SET","key":"age","value":41` + ev + `}]}`, "", nil},
		{"value an object", `{"operations":[{"op":"SET","key":"age","value":{"years":41}` + ev + `}]}`, "", nil},
		{"evidence a number", `{"operations":[{"op":"SET","key":"name","value":"Ana","evidence":7}]}`, "", nil},
		{"end date a number", `{"operations":[{"op":"SET","key":"name","value":"Ana","validUntil":20261231` + ev + `}]}`, "", nil},
		{"category a list", `{"operations":[{"op":"SET","key":"name","value":"Ana","category":["health"]` + ev + `}]}`, "", nil},
		{"extra item member", `{"operations":[{"op":"SET","key":"name","value":"Ana","why":"said so"` + ev + `}]}`, "", nil},
		{"one bad among good", `{"operations":[{"op":"SET","key":"name","value":"Ana"` + ev + `},{"op":"SET","key":"x","value":1` + ev + `}]}`, "", nil},

		{"key too long", `{"operations":[{"op":"SET","key":"` + long + `","value":"v"` + ev + `}]}`, cut, map[string]string{long[:len(long)-2]: "v"}},
		{"value too long", `{"operations":[{"op":"SET","key":"k","value":"` + long + `"` + ev + `}]}`, cut, map[string]string{"k": long[:len(long)-2]}},
		{"evidence too long", `{"operations":[{"op":"SET","key":"name","value":"Ana","evidence":"` + turn + `"}]}`, cut, map[string]string{"name": "Ana"}},
		{"op lower case", `{"operations":[{"op":"set","key":"name","value":"Ana"` + ev + `}]}`, normalised, map[string]string{"name": "Ana"}},
		{"op with spaces", `{"operations":[{"op":" DELETE ","key":"name"` + ev + `}]}`, normalised, map[string]string{}},
		{"member in upper case", `{"Operations":[{"OP":"SET","Key":"name","VALUE":"Ana","Evidence":"I'm Ana"}]}`, memberCase, map[string]string{"name": "Ana"}},
		{"delete with null value", `{"operations":[{"op":"DELETE","key":"name","value":null` + ev + `}]}`, nullValue, map[string]string{}},
		{"delete without evidence", `{"operations":[{"op":"DELETE","key":"name"}]}`, noEvidence, map[string]string{}},
		{"set without evidence", `{"operations":[{"op":"SET","key":"name","value":"Ana"}]}`, noEvidence, map[string]string{}},
		{"category not in the enum", `{"operations":[{"op":"SET","key":"name","value":"Ana","category":"hobby"` + ev + `}]}`, otherCategory, map[string]string{"name": "Ana"}},
		{"key of punctuation", `{"operations":[{"op":"SET","key":"!!!","value":"Ana"` + ev + `}]}`, storeRule, nil},
		{"value of spaces", `{"operations":[{"op":"SET","key":"name","value":"   "` + ev + `}]}`, storeRule, nil},
		{"end date not a date", `{"operations":[{"op":"SET","key":"name","value":"Ana","validUntil":"Friday"` + ev + `}]}`, storeRule, nil},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.input))
			schemaOK := err == nil && sch.Validate(inst) == nil

			store, err := memory.New(memorytest.NewRepo(), memory.Config{CheapModelID: modelID, MaxOperations: maxOps, MaxFactChars: maxChars},
				memory.WithModel(bedrock.New(textAnswer{tt.input}, bedrock.WithOutputMode(bedrock.OutputJSON))))
			if err != nil {
				t.Fatal(err)
			}
			if got := store.Config(); got.MaxOperations != maxOps || got.MaxFactChars != maxChars {
				t.Fatalf("config = %d operations, %d chars; want %d, %d", got.MaxOperations, got.MaxFactChars, maxOps, maxChars)
			}
			res, err := store.Extract(context.Background(), memory.ExtractRequest{
				Scope: memory.Scope{TenantID: "acme", UserID: "u-1"}, ThreadID: "th-1", TurnCount: 1,
				Turns: []memory.Turn{{Role: memory.RoleUser, Text: turn}}})
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			pipelineOK := res.Outcome == memory.OutcomeChanged || res.Outcome == memory.OutcomeUnchanged
			if !pipelineOK && res.Outcome != memory.OutcomeBadAnswer {
				t.Fatalf("outcome %s (%v), want changed, unchanged or bad_answer", res.Outcome, res.Reported)
			}
			seen[tt.class] = true
			switch {
			case tt.class == "" && schemaOK != pipelineOK:
				t.Fatalf("schema accepts: %v; pipeline accepts: %v (outcome %s, %v)", schemaOK, pipelineOK, res.Outcome, res.Reported)
			case tt.class == storeRule && (!schemaOK || pipelineOK):
				t.Fatalf("schema accepts: %v; pipeline accepts: %v; want only the schema to accept (%s)", schemaOK, pipelineOK, tt.class)
			case tt.class != "" && tt.class != storeRule && (schemaOK || !pipelineOK):
				t.Fatalf("schema accepts: %v; pipeline accepts: %v; want only the pipeline to accept (%s)", schemaOK, pipelineOK, tt.class)
			}
			got := map[string]string{}
			for _, f := range res.Facts {
				got[f.Key] = f.Value
			}
			if !pipelineOK {
				if len(got) != 0 || memory.ErrorCode(res.Reported) != memory.CodeBadAnswer {
					t.Errorf("refused answer wrote %v, reported %v; want nothing written and a bad answer", got, res.Reported)
				}
				return
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("facts = %v, want %v", got, tt.want)
			}
		})
	}
	for _, class := range []string{"", cut, normalised, memberCase, nullValue, noEvidence, otherCategory, storeRule} {
		if !seen[class] {
			t.Errorf("no input of class %q", class)
		}
	}
}

// TestLargestAnswerFits holds maxTokens to what the caps need. The
// largest answer the operations tool admits under the default caps
// (memory.LargestAnswer of memory.DefaultMaxOperations operations with keys
// and values of the template's largest MaxFactChars) is valid under that
// tool's schema and read by memory.ParseOperations; MaxTokensFor gives it
// its tokens at 4 bytes a token with the margin, under MaxTokensUpperBound, while
// one operation more would not fit: DefaultMaxOperations is the most that
// do, and the largest import answer (memory.ImportOperations of a full
// part) fits as well. Through the stand-in, which stops an answer at maxTokens as Bedrock
// does, that answer stops at FirstMaxTokens, is asked for once more and
// arrives whole, with no max_tokens stop. docs/extractor.md says the same
// figures.
func TestLargestAnswerFits(t *testing.T) {
	maxOps, maxChars := memory.DefaultMaxOperations, templateMaxFactChars(t)
	largest := memory.LargestAnswer(maxOps, maxChars)
	sch := compileTool(t, memory.OperationsTool(maxOps, maxChars, true))
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(largest))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("the largest answer is not valid under the tool's schema: %v", err)
	}
	ops, err := memory.ParseOperations(largest)
	if err != nil || len(ops) != maxOps {
		t.Fatalf("ParseOperations(largest) = %d operations, %v", len(ops), err)
	}
	need := func(n int) int { // the tokens, margin included, before the cap
		return bedrock.AnswerTokens + (n/bedrock.BytesPerToken)*(100+bedrock.TokenMarginPercent)/100
	}
	got := int(bedrock.MaxTokensFor(len(largest)))
	if n := need(len(largest)); got < n || n > bedrock.MaxTokensUpperBound {
		t.Errorf("MaxTokensFor(%d bytes) = %d; the answer needs %d, at most MaxTokensUpperBound %d", len(largest), got, n, bedrock.MaxTokensUpperBound)
	}
	if more := len(memory.LargestAnswer(maxOps+1, maxChars)); need(more) <= bedrock.MaxTokensUpperBound {
		t.Errorf("%d operations (%d bytes, %d tokens) still fit MaxTokensUpperBound %d: DefaultMaxOperations is not the most that fit",
			maxOps+1, more, need(more), bedrock.MaxTokensUpperBound)
	}

	s, url := standIn(t)
	m, o := newModel(url)
	req := request(anaTranscript)
	req.MaxOperations, req.MaxAnswerBytes, req.Tool = maxOps, len(largest), memory.OperationsTool(maxOps, maxChars, true)
	s.Script(fakebedrock.Step{Input: largest}, fakebedrock.Step{Input: largest})
	ans, err := m.Extract(context.Background(), req)
	if err != nil || len(ans.Operations) != maxOps {
		t.Fatalf("Extract of the largest answer = %d operations, %v", len(ans.Operations), err)
	}
	var asked []int
	for _, c := range calls(t, s) {
		asked = append(asked, c.MaxTokens)
	}
	if c := o.last(t); c.StopReason != "tool_use" || len(asked) != 2 || asked[0] != bedrock.FirstMaxTokens || asked[1] != got {
		t.Errorf("stop reason %q, maxTokens asked %v; want tool_use after [%d %d]", c.StopReason, asked, bedrock.FirstMaxTokens, got)
	}
	t.Logf("the largest answer: %d operations, %d bytes; maxTokens %d (first request %d)", maxOps, len(largest), got, bedrock.FirstMaxTokens)
	// An import call's answer has its own bound, memory.ImportOperations of
	// the statements it reads: its largest, for a full part, fits too.
	importOps := memory.ImportOperations(memory.ImportPartStatements)
	if n := need(len(memory.LargestAnswer(importOps, maxChars))); importOps != memory.ImportMaxOperations || n > bedrock.MaxTokensUpperBound {
		t.Errorf("an import call of %d statements may answer %d operations, %d tokens: over MaxTokensUpperBound %d, or not ImportMaxOperations",
			memory.ImportPartStatements, importOps, n, bedrock.MaxTokensUpperBound)
	}

	th := docblock.Thousands
	perOp := len(memory.LargestAnswer(2, maxChars)) - len(memory.LargestAnswer(1, maxChars))
	docblock.Check(t, filepath.Join("..", "docs", "extractor.md"), "largest-answer", strings.Join([]string{
		"| figure | value |",
		"|---|---:|",
		fmt.Sprintf("| `bedrock.FirstMaxTokens`, the first request's `maxTokens` | %s |", th(bedrock.FirstMaxTokens)),
		fmt.Sprintf("| `bedrock.AnswerTokens`, the call's frame | %s |", th(bedrock.AnswerTokens)),
		fmt.Sprintf("| `bedrock.BytesPerToken` | %d |", bedrock.BytesPerToken),
		fmt.Sprintf("| `bedrock.TokenMarginPercent` | %d %% |", bedrock.TokenMarginPercent),
		fmt.Sprintf("| `bedrock.MaxTokensUpperBound` | %s |", th(bedrock.MaxTokensUpperBound)),
		fmt.Sprintf("| `memory.DefaultMaxOperations` | %d |", maxOps),
		fmt.Sprintf("| the template's largest `MaxFactChars` | %d |", maxChars),
		fmt.Sprintf("| the largest answer | %s bytes (%s an operation) |", th(len(largest)), th(perOp)),
		fmt.Sprintf("| `maxTokens` of the second request | %s |", th(got)),
		fmt.Sprintf("| tokens one operation more would need | %s |", th(need(len(memory.LargestAnswer(maxOps+1, maxChars))))),
	}, "\n"))
}

// templateMaxFactChars returns the template's largest MaxFactChars.
func templateMaxFactChars(t *testing.T) int {
	t.Helper()
	p := httpapitest.LoadSAMTemplate(t)["Parameters"].(map[string]any)["MaxFactChars"].(map[string]any)
	n, err := strconv.Atoi(fmt.Sprint(p["MaxValue"]))
	if err != nil {
		t.Fatalf("template MaxFactChars.MaxValue: %v", err)
	}
	return n
}

// compileTool compiles the input schema of tool.
func compileTool(t *testing.T, tool memory.ToolDefinition) *jsonschema.Schema {
	t.Helper()
	sdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.InputSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("urn:tool", sdoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:tool")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// TestStandInAnswersMatchTheSchema holds the Converse stand-in's
// rule-based answers to the schema of the operations tool the store sends:
// every operation has its evidence, end dates are dates, categories are
// in the enum.
func TestStandInAnswersMatchTheSchema(t *testing.T) {
	sch := compileTool(t, memory.OperationsTool(8, 200, true))
	today := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, said := range []string{
		"Hi, I'm Ana from Lisbon, answer in Portuguese",
		"Please forget where I live. I work as a nurse",
		"I'm in Paris until Friday and I'm a teacher this year",
		"Please remember that I'm diabetic",
		"I'm allergic to peanuts, my religion is Islam",
	} {
		ops := fakebedrock.RuleOperations("User: "+said, today)
		if len(ops) == 0 {
			t.Errorf("%q: no operation", said)
		}
		b, err := json.Marshal(map[string]any{"operations": ops})
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%q: the stand-in answers %s, which the tool's schema refuses: %v", said, b, err)
		}
	}
}
