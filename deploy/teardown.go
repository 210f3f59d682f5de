package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// kept is a resource that deleting the stack leaves behind: its
// DeletionPolicy is Retain or RetainExceptOnCreate.
type kept struct {
	LogicalID, Type string
	// PhysicalID is the stack's name for it; "" when the stack is not
	// read or has no such resource.
	PhysicalID string
}

// retainedResources lists the template's resources that a stack deletion
// keeps, sorted by logical ID.
func retainedResources(templatePath string) ([]kept, error) {
	src, err := os.ReadFile(templatePath)
	if err != nil {
		return nil, err
	}
	doc, err := samtemplate.Decode(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", templatePath, err)
	}
	res, _ := doc["Resources"].(map[string]any)
	var out []kept
	for _, id := range slices.Sorted(maps.Keys(res)) {
		r, _ := res[id].(map[string]any)
		switch r["DeletionPolicy"] {
		case "Retain", "RetainExceptOnCreate":
			typ, _ := r["Type"].(string)
			out = append(out, kept{LogicalID: id, Type: typ})
		}
	}
	return out, nil
}

// stackResources is the CloudFormation call that names the stack's
// resources.
type stackResources interface {
	ListStackResources(context.Context, *cloudformation.ListStackResourcesInput, ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error)
}

// physicalIDs fills in the stack's names of the kept resources.
func physicalIDs(ctx context.Context, cfn stackResources, stack string, ks []kept) error {
	p := cloudformation.NewListStackResourcesPaginator(cfn, &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)})
	names := map[string]string{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list the resources of %s: %w", stack, err)
		}
		for _, r := range page.StackResourceSummaries {
			names[aws.ToString(r.LogicalResourceId)] = aws.ToString(r.PhysicalResourceId)
		}
	}
	for i := range ks {
		ks[i].PhysicalID = names[ks[i].LogicalID]
	}
	return nil
}

// deleteCommand is the AWS CLI command that deletes a kept resource.
func deleteCommand(k kept, region string) string {
	id := k.PhysicalID
	if id == "" {
		id = "<" + k.LogicalID + "'s physical ID>"
	}
	switch k.Type {
	case "AWS::DynamoDB::Table":
		return fmt.Sprintf("aws dynamodb delete-table --region %s --table-name %s", region, id)
	case "AWS::SQS::Queue":
		return fmt.Sprintf("aws sqs delete-queue --region %s --queue-url %s", region, id)
	case "AWS::Logs::LogGroup":
		return fmt.Sprintf("aws logs delete-log-group --region %s --log-group-name %s", region, id)
	case "AWS::Cognito::UserPool":
		return fmt.Sprintf("aws cognito-idp delete-user-pool --region %s --user-pool-id %s", region, id)
	case "AWS::S3::Bucket":
		return fmt.Sprintf("aws s3 rb --region %s --force s3://%s", region, id)
	}
	return fmt.Sprintf("# %s %s: delete it in the console", k.Type, id)
}

// printTeardown writes the plan: delete the stack, then what it keeps.
func printTeardown(w io.Writer, stack, region string, ks []kept) {
	fmt.Fprintf(w, "# 1. Delete the stack (every resource but those below):\n")
	fmt.Fprintf(w, "sam delete --stack-name %s --region %s\n\n", stack, region)
	fmt.Fprintf(w, "# 2. Then the %d resource(s) template.yaml keeps (DeletionPolicy Retain): they hold data,\n", len(ks))
	fmt.Fprintf(w, "#    so read them first if you need it (the table's records, the queues' waiting messages).\n")
	for _, k := range ks {
		fmt.Fprintf(w, "%s   # %s\n", deleteCommand(k, region), k.LogicalID)
	}
}

// teardownCmd prints how to remove everything; it deletes nothing.
func teardownCmd(ctx context.Context, args []string) error {
	c := newFlags("teardown")
	offline := c.fs.Bool("print", false, "list from template.yaml only, without reading the stack's names of the resources")
	if err := c.parse(args); err != nil {
		return err
	}
	s, err := c.settings()
	if err != nil {
		return err
	}
	ks, err := retainedResources(filepath.Join(*c.root, "template.yaml"))
	if err != nil {
		return err
	}
	region := s.Region
	if !*offline {
		cfg, err := loadAWS(ctx, s.Region)
		if err != nil {
			return err
		}
		region = cfg.Region
		if err := physicalIDs(ctx, cloudformation.NewFromConfig(cfg), s.StackName, ks); err != nil {
			return noStack(err, s.StackName, region)
		}
	}
	printTeardown(os.Stdout, s.StackName, region, ks)
	return nil
}
