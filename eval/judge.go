package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/memory"
)

// judgeSystem is the judge's system prompt.
const judgeSystem = `You compare a stored fact about a user with the values a person accepted for it.
Answer SAME when the stored value states the same fact as one of the accepted values, in any words or language.
Answer DIFFERENT when it states another fact, a negation of it, another place or another time zone, or more than one fact.
Answer with the single word SAME or DIFFERENT.`

// judgeReport has the model of -judge, on Bedrock, judge the wrong
// values of rep.
func judgeReport(ctx context.Context, o options, rep *score.Report, convs []gold.Conversation, stderr io.Writer) error {
	client, _, err := liveClient(ctx, o.region)
	if err != nil {
		return fmt.Errorf("-judge: %w", err)
	}
	judgeWith(ctx, client, o.judgeModel, rep, convs)
	if j := rep.Judge; j.Failed > 0 {
		fmt.Fprintf(stderr, "eval: the judge failed on %d of %d values\n", j.Failed, j.Asked)
	}
	return nil
}

// judgeWith has model, through client, judge the wrong values of rep.
func judgeWith(ctx context.Context, client *bedrockruntime.Client, model string, rep *score.Report, convs []gold.Conversation) {
	byID := map[string]gold.Conversation{}
	for _, c := range convs {
		byID[c.ID] = c
	}
	rep.ApplyJudge(model, func(convID string, f score.Fact) (bool, error) {
		conv := byID[convID]
		for _, e := range conv.Expect {
			if e.Subject.Names(memory.CanonicalKey(f.Key)) {
				return askJudge(ctx, client, model, e, f.Value)
			}
		}
		return false, errors.New("no expected subject for the fact")
	})
}

// askJudge asks the judge whether value means one of e's accepted values.
func askJudge(ctx context.Context, client *bedrockruntime.Client, model string, e gold.Expected, value string) (bool, error) {
	accepted := strings.Join(append(append([]string{}, e.Values...), e.Contains...), "; ")
	prompt := fmt.Sprintf("Subject: %s\nAccepted values: %s\nStored value: %s", e.Subject.Name, accepted, value)
	out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(model),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: judgeSystem}},
		Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: prompt}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(5), Temperature: aws.Float32(0)},
	})
	if err != nil {
		return false, err
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok || len(msg.Value.Content) == 0 {
		return false, errors.New("the judge answered no message")
	}
	text, ok := msg.Value.Content[0].(*types.ContentBlockMemberText)
	if !ok {
		return false, errors.New("the judge answered no text")
	}
	switch w := strings.ToUpper(strings.Trim(strings.TrimSpace(text.Value), ".!")); {
	case strings.HasPrefix(w, "SAME"):
		return true, nil
	case strings.HasPrefix(w, "DIFFERENT"):
		return false, nil
	}
	return false, fmt.Errorf("the judge answered %q, neither SAME nor DIFFERENT", text.Value)
}
