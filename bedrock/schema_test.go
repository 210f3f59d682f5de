package bedrock_test

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/usermemory/usermemory/bedrock"
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
	// cut: a key or value over maxLength. The schema refuses it; the store
	// cuts it at a rune boundary, as DESIGN.md says of an extracted fact.
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
	// storeRule: a SET without a value (the schema requires op and key
	// only), a key with no letter or digit, a value that is only white
	// space. The schema accepts it; the store refuses the answer, since the
	// value, the canonical key or the clean value is empty.
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
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.InputSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("urn:tool", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:tool")
	if err != nil {
		t.Fatal(err)
	}

	long := strings.Repeat("é", maxChars+1)
	tests := []struct {
		name, input string
		class       string            // "" when the schema and the pipeline agree
		want        map[string]string // the facts after an accepted input
	}{
		{"empty list", `{"operations":[]}`, "", map[string]string{}},
		{"one set", `{"operations":[{"op":"SET","key":"name","value":"Ana"}]}`, "", map[string]string{"name": "Ana"}},
		{"set then delete", `{"operations":[{"op":"SET","key":"name","value":"Ana"},{"op":"DELETE","key":"name"}]}`, "", map[string]string{}},
		{"delete with a value", `{"operations":[{"op":"DELETE","key":"name","value":"x"}]}`, "", map[string]string{}},
		{"key made canonical", `{"operations":[{"op":"SET","key":"Home City","value":" Lisbon "}]}`, "", map[string]string{"home_city": "Lisbon"}},
		{"as many as allowed", `{"operations":[{"op":"SET","key":"a","value":"1"},{"op":"SET","key":"b","value":"2"},{"op":"SET","key":"c","value":"3"}]}`,
			"", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"key of maxLength", `{"operations":[{"op":"SET","key":"` + long[2:] + `","value":"v"}]}`, "", map[string]string{long[2:]: "v"}},
		{"white space around", " \n" + `{"operations":[]}` + "\n ", "", map[string]string{}},

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
		{"too many", `{"operations":[{"op":"DELETE","key":"a"},{"op":"DELETE","key":"b"},{"op":"DELETE","key":"c"},{"op":"DELETE","key":"d"}]}`, "", nil},
		{"item a string", `{"operations":["SET name Ana"]}`, "", nil},
		{"item null", `{"operations":[null]}`, "", nil},
		{"item an array", `{"operations":[["SET","name","Ana"]]}`, "", nil},
		{"no op", `{"operations":[{"key":"name","value":"Ana"}]}`, "", nil},
		{"op null", `{"operations":[{"op":null,"key":"name","value":"Ana"}]}`, "", nil},
		{"op a number", `{"operations":[{"op":1,"key":"name","value":"Ana"}]}`, "", nil},
		{"unknown op", `{"operations":[{"op":"UPSERT","key":"name","value":"Ana"}]}`, "", nil},
		{"no key", `{"operations":[{"op":"SET","value":"Ana"}]}`, "", nil},
		{"empty key", `{"operations":[{"op":"SET","key":"","value":"Ana"}]}`, "", nil},
		{"key null", `{"operations":[{"op":"SET","key":null,"value":"Ana"}]}`, "", nil},
		{"key a number", `{"operations":[{"op":"SET","key":7,"value":"Ana"}]}`, "", nil},
		{"set without value", `{"operations":[{"op":"SET","key":"name"}]}`, storeRule, nil},
		{"set with null value", `{"operations":[{"op":"SET","key":"name","value":null}]}`, "", nil},
		{"value a number", `{"operations":[{"op":"SET","key":"age","value":41}]}`, "", nil},
		{"value an object", `{"operations":[{"op":"SET","key":"age","value":{"years":41}}]}`, "", nil},
		{"extra item member", `{"operations":[{"op":"SET","key":"name","value":"Ana","why":"said so"}]}`, "", nil},
		{"one bad among good", `{"operations":[{"op":"SET","key":"name","value":"Ana"},{"op":"SET","key":"x","value":1}]}`, "", nil},

		{"key too long", `{"operations":[{"op":"SET","key":"` + long + `","value":"v"}]}`, cut, map[string]string{long[:len(long)-2]: "v"}},
		{"value too long", `{"operations":[{"op":"SET","key":"k","value":"` + long + `"}]}`, cut, map[string]string{"k": long[:len(long)-2]}},
		{"op lower case", `{"operations":[{"op":"set","key":"name","value":"Ana"}]}`, normalised, map[string]string{"name": "Ana"}},
		{"op with spaces", `{"operations":[{"op":" DELETE ","key":"name"}]}`, normalised, map[string]string{}},
		{"member in upper case", `{"Operations":[{"OP":"SET","Key":"name","VALUE":"Ana"}]}`, memberCase, map[string]string{"name": "Ana"}},
		{"delete with null value", `{"operations":[{"op":"DELETE","key":"name","value":null}]}`, nullValue, map[string]string{}},
		{"key of punctuation", `{"operations":[{"op":"SET","key":"!!!","value":"Ana"}]}`, storeRule, nil},
		{"value of spaces", `{"operations":[{"op":"SET","key":"name","value":"   "}]}`, storeRule, nil},
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
				Turns: []memory.Turn{{Role: memory.RoleUser, Text: "I'm Ana"}}})
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
	for _, class := range []string{"", cut, normalised, memberCase, nullValue, storeRule} {
		if !seen[class] {
			t.Errorf("no input of class %q", class)
		}
	}
}
