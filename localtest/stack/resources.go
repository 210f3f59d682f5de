package stack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/samtemplate"
)

// createTable creates the template's table with dynamorepo.CreateTable,
// after checking that the template defines it as the repository needs it
// (key, key type, TTL attribute, billing mode), and returns its name.
func createTable(ctx context.Context, api *dynamodb.Client, app *samtemplate.App) (string, error) {
	if len(app.Tables) != 1 {
		return "", fmt.Errorf("stack: the template has %d DynamoDB tables; the local stack expects one", len(app.Tables))
	}
	for _, t := range app.Tables {
		checks := []struct{ what, template, repo string }{
			{"partition key", t.HashKey, dynamorepo.KeyAttribute},
			{"partition key type", t.HashKeyType, dynamorepo.KeyAttributeType},
			{"TTL attribute", t.TTLAttribute, dynamorepo.TTLAttribute},
			{"billing mode", t.BillingMode, dynamorepo.BillingMode},
		}
		for _, c := range checks {
			if c.template != c.repo {
				return "", fmt.Errorf("stack: table %s: the template's %s is %q, the repository's %q", t.LogicalID, c.what, c.template, c.repo)
			}
		}
		if t.RangeKey != "" {
			return "", fmt.Errorf("stack: table %s: the template has a sort key %q; the repository has none", t.LogicalID, t.RangeKey)
		}
		if err := dynamorepo.CreateTable(ctx, api, t.Name); err != nil {
			return "", fmt.Errorf("stack: %w", err)
		}
		return t.Name, nil
	}
	return "", nil
}

// createQueues creates the template's queues, dead-letter queues first,
// with their attributes and redrive policies. visibility, when not zero,
// replaces every queue's visibility timeout.
func createQueues(ctx context.Context, api *sqs.Client, app *samtemplate.App, visibility time.Duration) error {
	done := map[string]bool{}
	var create func(id string) error
	create = func(id string) error {
		if done[id] {
			return nil
		}
		q := app.Queues[id]
		if q.DeadLetterQueue != "" {
			if err := create(q.DeadLetterQueue); err != nil {
				return err
			}
		}
		attrs := map[string]string{}
		for k, v := range q.Attributes {
			attrs[k] = v
		}
		if visibility > 0 {
			attrs["VisibilityTimeout"] = strconv.Itoa(int(visibility / time.Second))
		}
		if _, err := api.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: attrs}); err != nil {
			return fmt.Errorf("stack: create queue %s: %w", q.Name, err)
		}
		done[id] = true
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(app.Queues)) {
		if err := create(id); err != nil {
			return err
		}
	}
	return nil
}
