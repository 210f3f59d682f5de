package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
)

// TestRedriveRespectsErasure runs the command on moto_server's SQS and
// DynamoDB as an operator would (flags, the SDK's default credential
// chain): of five dead letters, the message of a user erased after it was
// sent and the one sent before a removal are deleted, the unreadable one
// stays, and the two others go back to the extraction queue, bodies and
// groups unchanged, counted and never printed.
func TestRedriveRespectsErasure(t *testing.T) {
	endpoint := motoserver.Endpoint(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	ctx := context.Background()
	opts := func(o *sqs.Options) { o.Region, o.BaseEndpoint = "us-east-1", aws.String(endpoint) }
	q := sqs.New(sqs.Options{Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}, opts)
	suffix := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	queue, dlq := fifoQueue(t, q, "main-"+suffix), fifoQueue(t, q, "dlq-"+suffix)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	table := "redrive-" + suffix
	if err := dynamorepo.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	repo := dynamorepo.New(db, table)
	now := time.Now().UTC().Truncate(time.Millisecond)
	ana, bob, carol := memory.Scope{TenantID: "acme", UserID: "ana"}, memory.Scope{TenantID: "acme", UserID: "bob"}, memory.Scope{TenantID: "acme", UserID: "carol"}
	if _, err := repo.Erase(ctx, ana, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.SetFact(ctx, bob, memory.Fact{Key: "pet", Value: "cat", UpdatedAt: now.Add(-3 * time.Hour)}, 30); err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.DeleteFact(ctx, bob, "pet", now.Add(-time.Hour), 100); err != nil {
		t.Fatal(err)
	}
	p := producer.New(q, dlq)
	for i, m := range []struct {
		who  memory.Scope
		sent time.Duration
	}{{ana, -2 * time.Hour}, {ana, -30 * time.Minute}, {bob, -2 * time.Hour}, {carol, -2 * time.Hour}} {
		if err := p.Send(ctx, producer.Message{TenantID: m.who.TenantID, UserID: m.who.UserID, ThreadID: "th-1", TurnCount: 2 * (i + 1), PreviousTurnCount: 2 * i,
			Turns: []producer.Turn{{Role: "user", Text: "secret-turn-text of " + m.who.UserID}}, SentAt: now.Add(m.sent)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dlq), MessageBody: aws.String("not json"),
		MessageGroupId: aws.String("acme/dave"), MessageDeduplicationId: aws.String("bad-1")}); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	args := []string{"-region", "us-east-1", "-endpoint", endpoint, "-queue-url", queue, "-dlq-url", dlq, "-table", table, "-hold", "30s"}
	if err := run(ctx, args, &out); err != nil {
		t.Fatal(err)
	}
	var got Counts
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if want := (Counts{Redriven: 2, Erased: 1, Forgotten: 1, Unreadable: 1}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if strings.Contains(out.String(), "secret") || strings.Contains(out.String(), "ana") {
		t.Errorf("the output holds a message's content: %s", out.String())
	}
	moved := receiveAll(t, q, queue)
	var bodies []string
	for _, m := range moved {
		bodies = append(bodies, m.Attributes["MessageGroupId"]+" "+aws.ToString(m.Body)[strings.Index(aws.ToString(m.Body), "secret"):][:30])
	}
	if len(moved) != 2 || !strings.HasPrefix(bodies[0], "acme/ana secret-turn-text of ana") || !strings.HasPrefix(bodies[1], "acme/carol secret-turn-text of carol") {
		t.Errorf("the extraction queue holds %q, want ana's later message and carol's, in their groups", bodies)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dlq),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	if v, h := attrs.Attributes["ApproximateNumberOfMessages"], attrs.Attributes["ApproximateNumberOfMessagesNotVisible"]; v != "0" || h != "1" {
		t.Errorf("the dead-letter queue holds %s visible and %s held messages, want the unreadable one alone", v, h)
	}
}

func fifoQueue(t *testing.T, q *sqs.Client, name string) string {
	t.Helper()
	out, err := q.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

func receiveAll(t *testing.T, q *sqs.Client, url string) []sqstypes.Message {
	t.Helper()
	var all []sqstypes.Message
	for {
		out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}, VisibilityTimeout: 60})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		all = append(all, out.Messages...)
	}
}
