package dynamorepo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The table definition, shared by [CreateTable], the tests, the local stack
// and the check of template.yaml.
const (
	// KeyAttribute is the name of the table's partition key, a string. The
	// table has no sort key.
	KeyAttribute = "pk"
	// KeyAttributeType is the DynamoDB type of [KeyAttribute]: a string.
	KeyAttributeType = "S"
	// TTLAttribute is the table's TTL attribute: a number of unix seconds
	// after which DynamoDB deletes the item (fences and usage counters).
	TTLAttribute = "expiresAt"
	// BillingMode is the table's billing mode: on demand.
	BillingMode = "PAY_PER_REQUEST"
)

// TableAPI lists the *dynamodb.Client methods [CreateTable] calls.
type TableAPI interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// CreateTable creates the table called name as the repository needs it: a
// string partition key [KeyAttribute], on-demand billing, and TTL enabled on
// [TTLAttribute]. It waits until the table is active. It returns the SDK's
// error when the table exists already or the service fails.
func CreateTable(ctx context.Context, api TableAPI, name string) error {
	_, err := api.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(KeyAttribute), AttributeType: types.ScalarAttributeType(KeyAttributeType)},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(KeyAttribute), KeyType: types.KeyTypeHash},
		},
		BillingMode: types.BillingMode(BillingMode),
	})
	if err != nil {
		return fmt.Errorf("dynamorepo: create table %s: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(api, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 5 * time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 5*time.Minute); err != nil {
		return fmt.Errorf("dynamorepo: wait for table %s: %w", name, err)
	}
	_, err = api.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(TTLAttribute),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamorepo: enable TTL on table %s: %w", name, err)
	}
	return nil
}
