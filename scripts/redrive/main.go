// Command redrive moves the extraction messages of the dead-letter queue
// back to the extraction queue, once the cause of their failure is fixed,
// and deletes at once those of users erased after the message was sent
// (and those sent before a clear or a removal of the user's): sent again,
// a message gets a new SentTimestamp, which would pass the fence. It
// prints counts, never a message's content.
//
// Against a deployed stack (its outputs name the queues and the table),
// with a named profile of the shared AWS configuration:
//
//	go run ./scripts/redrive -stack usermemory -profile ops -region eu-west-1
//
// Against the running local stack (go run ./localtest up):
//
//	go run ./scripts/redrive -local
//
// Or with everything named: -queue-url, -dlq-url, -table, and -endpoint
// for an emulator.
//
// A message that is not an extraction message stays in the dead-letter
// queue (counted keptUnreadable), invisible for -hold; the messages behind
// it in its FIFO group wait for a run after that. Run the command again
// until it prints no redriven message; a message redriven twice within SQS's
// 5-minute deduplication interval is sent once.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/localtest/stack"
)

// target is where a redrive runs: the SDK configuration, an endpoint for
// an emulator ("" for AWS), the queues and the table.
type target struct {
	cfg                   aws.Config
	endpoint              string
	queue, dlq, tableName string
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "redrive:", err)
		os.Exit(1)
	}
}

// run parses args, redrives and writes the counts to stdout as one JSON
// line, also when an error stopped the redrive part way.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("redrive", flag.ContinueOnError)
	stackName := fs.String("stack", "", "a deployed stack: its outputs QueueUrl, DeadLetterQueueUrl and TableName")
	profile := fs.String("profile", "", "a profile of the shared AWS configuration (default: the SDK's default chain)")
	region := fs.String("region", "", "the Region (default: the profile's)")
	local := fs.Bool("local", false, "the running local stack (go run ./localtest up)")
	state := fs.String("state", stack.DefaultStateDir(), "with -local: the local stack's state folder")
	var t target
	fs.StringVar(&t.queue, "queue-url", "", "the extraction queue's URL")
	fs.StringVar(&t.dlq, "dlq-url", "", "the dead-letter queue's URL")
	fs.StringVar(&t.tableName, "table", "", "the table's name")
	fs.StringVar(&t.endpoint, "endpoint", "", "an emulator's endpoint for SQS and DynamoDB")
	hold := fs.Duration("hold", 5*time.Minute, "how long a received message stays invisible while it is handled")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *hold < time.Second || *hold > 12*time.Hour {
		return fmt.Errorf("-hold %v: SQS takes a visibility timeout from 1 s to 12 h", *hold)
	}
	var err error
	switch {
	case *local:
		t, err = localTarget(*state)
	case *stackName != "":
		t, err = stackTarget(ctx, *stackName, *profile, *region)
	default:
		t.cfg, err = config.LoadDefaultConfig(ctx, config.WithSharedConfigProfile(*profile), config.WithRegion(*region))
	}
	if err != nil {
		return err
	}
	if t.queue == "" || t.dlq == "" || t.tableName == "" {
		return errors.New("name the queues and the table: -stack, -local, or -queue-url, -dlq-url and -table")
	}
	c, err := t.redrive(*hold).Run(ctx)
	b, _ := json.Marshal(c)
	fmt.Fprintln(stdout, string(b))
	return err
}

// redrive returns the redrive of t with the SDK's clients.
func (t target) redrive(hold time.Duration) *Redrive {
	db := dynamodb.NewFromConfig(t.cfg, func(o *dynamodb.Options) {
		if t.endpoint != "" {
			o.BaseEndpoint = aws.String(t.endpoint)
		}
	})
	q := sqs.NewFromConfig(t.cfg, func(o *sqs.Options) {
		if t.endpoint != "" {
			o.BaseEndpoint = aws.String(t.endpoint)
		}
	})
	return &Redrive{SQS: q, Records: dynamorepo.New(db, t.tableName), Queue: t.queue, DLQ: t.dlq, Hold: hold}
}

// stackTarget reads the outputs of the deployed stack name.
func stackTarget(ctx context.Context, name, profile, region string) (target, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithSharedConfigProfile(profile), config.WithRegion(region))
	if err != nil {
		return target{}, err
	}
	out, err := awslive.StackOutputs(ctx, cfg, name)
	if err != nil {
		return target{}, err
	}
	return target{cfg: cfg, queue: out["QueueUrl"], dlq: out["DeadLetterQueueUrl"], tableName: out["TableName"]}, nil
}

// localTarget reads what the running local stack wrote in its state
// folder: moto_server's endpoint, the queues and the table.
func localTarget(state string) (target, error) {
	info, err := stack.ReadInfo(state)
	if err != nil {
		return target{}, err
	}
	return target{cfg: info.AWSConfig(), endpoint: info.AWSEndpoint, queue: info.QueueURL, dlq: info.DLQURL, tableName: info.TableName}, nil
}
