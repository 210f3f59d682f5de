package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrock/types"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	rttypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// modelCatalog is the part of Bedrock's control plane the preflight reads.
type modelCatalog interface {
	GetFoundationModel(context.Context, *bedrock.GetFoundationModelInput, ...func(*bedrock.Options)) (*bedrock.GetFoundationModelOutput, error)
	GetInferenceProfile(context.Context, *bedrock.GetInferenceProfileInput, ...func(*bedrock.Options)) (*bedrock.GetInferenceProfileOutput, error)
}

// converser is the Bedrock runtime call of the optional one-token check.
type converser interface {
	Converse(context.Context, *bedrockruntime.ConverseInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// anthropicForm is why an Anthropic model may refuse its first call: the
// Bedrock console's model access page is retired, serverless models are
// enabled on first use, and "for Anthropic models, first-time users may
// need to submit use case details" (Bedrock user guide, foundation models
// reference, https://docs.aws.amazon.com/bedrock/latest/userguide/foundation-models-reference.html,
// read 2026-12-03).
const anthropicForm = "an Anthropic model: submit the one-time use case details in the Bedrock console's model catalogue before the first call"

// modelID returns the model or inference profile ID the extractor calls,
// as the template computes it (CHEAP_MODEL_ID).
func modelID(app *samtemplate.App) string {
	for _, id := range slices.Sorted(maps.Keys(app.Functions)) {
		if v := app.Functions[id].Env["CHEAP_MODEL_ID"]; v != "" {
			return v
		}
	}
	return ""
}

// models checks the cheap model and the Region's inference profile, and
// calls the model once when the person agrees.
func (p *preflight) models(ctx context.Context, app *samtemplate.App, params map[string]string) []Result {
	id, foundation := modelID(app), params["CheapFoundationModelId"]
	profile := id != foundation && strings.HasSuffix(id, "."+foundation)
	results := []Result{p.foundationModel(ctx, foundation, profile)}
	if profile {
		results = append(results, p.profile(ctx, id, foundation))
	} else {
		results = append(results, Result{Pass, "profile", fmt.Sprintf("CheapModelId %s is called as it is, through no inference profile", id), ""})
	}
	if p.model != nil {
		results = append(results, p.callModel(ctx, id))
	}
	return results
}

// foundationModel asks Bedrock for the model in the Region.
func (p *preflight) foundationModel(ctx context.Context, id string, viaProfile bool) Result {
	out, err := p.bedrock.GetFoundationModel(ctx, &bedrock.GetFoundationModelInput{ModelIdentifier: aws.String(id)})
	var nf *brtypes.ResourceNotFoundException
	var ad *brtypes.AccessDeniedException
	switch {
	case errors.As(err, &nf) && viaProfile:
		return Result{Warn, "model", fmt.Sprintf("%s is not offered on demand in %s; its inference profile may still route it elsewhere", id, p.region), ""}
	case errors.As(err, &nf):
		return Result{Block, "model", fmt.Sprintf("%s is not offered in %s", id, p.region),
			"set CheapFoundationModelId (and CheapModelId) to a model Bedrock serves here: `aws bedrock list-foundation-models --region " + p.region + "`"}
	case errors.As(err, &ad):
		return Result{Warn, "model", "bedrock:GetFoundationModel is denied to the deploying identity: the model is not checked", ""}
	case err != nil:
		return Result{Warn, "model", fmt.Sprintf("Bedrock GetFoundationModel %s failed: %v", id, err), ""}
	}
	d := out.ModelDetails
	res := Result{Pass, "model", fmt.Sprintf("%s (%s) is served in %s", id, aws.ToString(d.ProviderName), p.region), ""}
	if d.ModelLifecycle != nil && d.ModelLifecycle.Status != brtypes.FoundationModelLifecycleStatusActive {
		res.Status, res.Message = Warn, res.Message+", lifecycle "+string(d.ModelLifecycle.Status)
		res.Fix = "choose an ACTIVE model before this one is retired (docs/extractor.md)"
	}
	if strings.EqualFold(aws.ToString(d.ProviderName), "Anthropic") {
		res.Status, res.Fix = Warn, anthropicForm
	}
	return res
}

// profile asks Bedrock for the inference profile the template chose for
// the Region.
func (p *preflight) profile(ctx context.Context, id, foundation string) Result {
	out, err := p.bedrock.GetInferenceProfile(ctx, &bedrock.GetInferenceProfileInput{InferenceProfileIdentifier: aws.String(id)})
	var nf *brtypes.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return Result{Block, "profile", fmt.Sprintf("Bedrock has no inference profile %s in %s", id, p.region),
			"set CheapModelId to an inference profile or model ID served here: `aws bedrock list-inference-profiles --region " + p.region + "`"}
	case err != nil:
		return Result{Warn, "profile", fmt.Sprintf("Bedrock GetInferenceProfile %s failed: %v", id, err), ""}
	}
	if out.Status != brtypes.InferenceProfileStatusActive {
		return Result{Block, "profile", fmt.Sprintf("inference profile %s is %s", id, out.Status), "set CheapModelId to an active profile"}
	}
	for _, m := range out.Models {
		if strings.HasSuffix(aws.ToString(m.ModelArn), "/"+foundation) {
			return Result{Pass, "profile", fmt.Sprintf("inference profile %s is active and routes to %s", id, foundation), ""}
		}
	}
	return Result{Block, "profile", fmt.Sprintf("inference profile %s does not route to %s", id, foundation),
		"set CheapFoundationModelId to the model behind CheapModelId"}
}

// callModel asks before calling the model with one token of answer.
func (p *preflight) callModel(ctx context.Context, id string) Result {
	fmt.Fprintf(p.out, "Call %s once (a few input tokens, 1 output token, billed at the model's price per token: docs/cost.md)? [y/N] ", id)
	line, _ := bufio.NewReader(p.in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return Result{Warn, "model call", "not called (the answer was not yes): whether this account may call the model is not checked", ""}
	}
	_, err := p.model.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId:         aws.String(id),
		Messages:        []rttypes.Message{{Role: rttypes.ConversationRoleUser, Content: []rttypes.ContentBlock{&rttypes.ContentBlockMemberText{Value: "Say OK."}}}},
		InferenceConfig: &rttypes.InferenceConfiguration{MaxTokens: aws.Int32(1)},
	})
	var ad *rttypes.AccessDeniedException
	switch {
	case errors.As(err, &ad):
		return Result{Block, "model call", fmt.Sprintf("%s refused the call: %v", id, ad.ErrorMessage()),
			"allow bedrock:InvokeModel on the model and its profile (IAM and SCPs); for " + anthropicForm}
	case err != nil:
		return Result{Block, "model call", fmt.Sprintf("%s: %v", id, err), "check the model ID and the Region"}
	}
	return Result{Pass, "model call", id + " answered", ""}
}
