package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/producer"
)

// send sends one message to the running stack's extraction queue through
// the producer, as a gateway does: read from a file (-f) or made from the
// flags.
func send(ctx context.Context, args []string) error {
	fs := newFlags("send", "[-state DIR] [-f message.json | --tenant acme --user ana --thread th-1 --turns 2 --text \"I'm Ana\"]")
	state := fs.stateDir()
	file := fs.String("f", "", "a JSON file with the message (version 1); the other flags are then ignored")
	tenant := fs.String("tenant", "acme", "tenant ID")
	user := fs.String("user", "ana", "user ID")
	thread := fs.String("thread", "th-1", "thread ID")
	prev := fs.Int("previous", 0, "previousTurnCount")
	turns := fs.Int("turns", 2, "turnCount")
	text := fs.String("text", "Hi, I'm Ana and I live in Lisbon. Please answer in Portuguese.", "the user turn's text")
	answer := fs.String("answer", "Olá Ana!", "the assistant turn's text (empty for none)")
	if err := fs.parse(args, false); err != nil {
		return err
	}
	info, err := stack.ReadInfo(*state)
	if err != nil {
		return err
	}
	var m producer.Message
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
	} else {
		m = producer.Message{TenantID: *tenant, UserID: *user, ThreadID: *thread, PreviousTurnCount: *prev, TurnCount: *turns,
			Turns: []producer.Turn{{Role: "user", Text: *text}}}
		if strings.TrimSpace(*answer) != "" {
			m.Turns = append(m.Turns, producer.Turn{Role: "assistant", Text: *answer})
		}
	}
	client := sqs.NewFromConfig(info.AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(info.SQSURL) })
	p := producer.New(client, info.QueueURL)
	if err := p.Send(ctx, m); err != nil {
		return err
	}
	fmt.Printf("sent to %s: tenant %s, user %s, thread %s, turns %d→%d\n", info.QueueURL, m.TenantID, m.UserID, m.ThreadID, m.PreviousTurnCount, m.TurnCount)
	return nil
}
