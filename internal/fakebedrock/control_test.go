package fakebedrock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrock/types"
)

// TestControlPlaneReads drives the catalogue through the real bedrock
// client: what AddModel and AddProfile put there is described, the rest
// is a ResourceNotFoundException, and Reset empties it.
func TestControlPlaneReads(t *testing.T) {
	s, _ := start(t)
	c := bedrock.New(bedrock.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s.URL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), Retryer: aws.NopRetryer{},
	})
	ctx := context.Background()
	s.AddModel("amazon.nova-micro-v1:0", "Amazon")
	s.AddProfile("us.amazon.nova-micro-v1:0", "amazon.nova-micro-v1:0")

	m, err := c.GetFoundationModel(ctx, &bedrock.GetFoundationModelInput{ModelIdentifier: aws.String("amazon.nova-micro-v1:0")})
	if err != nil {
		t.Fatalf("GetFoundationModel: %v", err)
	}
	if got := m.ModelDetails.ModelLifecycle.Status; got != types.FoundationModelLifecycleStatusActive {
		t.Errorf("lifecycle %q, want ACTIVE", got)
	}
	if got := aws.ToString(m.ModelDetails.ProviderName); got != "Amazon" {
		t.Errorf("provider %q, want Amazon", got)
	}
	list, err := c.ListFoundationModels(ctx, &bedrock.ListFoundationModelsInput{})
	if err != nil || len(list.ModelSummaries) != 1 || aws.ToString(list.ModelSummaries[0].ModelId) != "amazon.nova-micro-v1:0" {
		t.Errorf("ListFoundationModels: %+v, %v; want the one model", list, err)
	}
	p, err := c.GetInferenceProfile(ctx, &bedrock.GetInferenceProfileInput{InferenceProfileIdentifier: aws.String("us.amazon.nova-micro-v1:0")})
	if err != nil {
		t.Fatalf("GetInferenceProfile: %v", err)
	}
	if p.Status != types.InferenceProfileStatusActive || len(p.Models) != 1 {
		t.Errorf("profile: status %q, %d models; want ACTIVE and 1", p.Status, len(p.Models))
	}

	var nf *types.ResourceNotFoundException
	if _, err := c.GetInferenceProfile(ctx, &bedrock.GetInferenceProfileInput{InferenceProfileIdentifier: aws.String("eu.amazon.nova-micro-v1:0")}); !errors.As(err, &nf) {
		t.Errorf("unknown profile: %v, want ResourceNotFoundException", err)
	}
	s.Reset()
	if _, err := c.GetFoundationModel(ctx, &bedrock.GetFoundationModelInput{ModelIdentifier: aws.String("amazon.nova-micro-v1:0")}); !errors.As(err, &nf) {
		t.Errorf("after Reset: %v, want ResourceNotFoundException", err)
	}
}
