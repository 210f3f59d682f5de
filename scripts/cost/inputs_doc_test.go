package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
)

// costDoc is the document the blocks of this file are written into.
var costDoc = filepath.Join("..", "..", "docs", "cost.md")

// TestCostDocProfile writes the block profile of docs/cost.md: the
// default profile the command measures, and the assumptions it states
// but cannot measure, from defaultProfile and the constants.
func TestCostDocProfile(t *testing.T) {
	if apiSeconds != notDueSeconds {
		t.Error("the block gives one duration for a fact API invocation and an extractor's that calls no model; the constants differ")
	}
	p := defaultProfile()
	th := docblock.Thousands
	rows := [][2]string{
		{"answers a day, spread over threads", fmt.Sprintf("%d over %d (%d answers, %d turns, per thread)", p.answersPerDay, p.threadsPerDay, p.answersPerDay/p.threadsPerDay, 2*p.answersPerDay/p.threadsPerDay)},
		{"a user turn, an assistant turn", fmt.Sprintf("%s and %s characters", th(p.userChars), th(p.assistantChars))},
		{"`ExtractEveryTurns`", fmt.Sprintf("%d (the default)", memory.DefaultExtractEveryTurns)},
		{"facts", strconv.Itoa(p.facts)},
		{"thread watermarks (`MaxThreads`), thread IDs", fmt.Sprintf("%d, UUIDs of %d characters", memory.DefaultMaxThreads, len(threadID(0)))},
		{"visits to the memory page", fmt.Sprintf("%g a week (one GET, one PUT)", p.pageVisitsWeek)},
		{"a month", fmt.Sprintf("%g days", p.days)},
		{"`IdleReadSeconds`", fmt.Sprintf("%d (the stack's default)", p.idleReadSeconds)},
		{"tokens (assumed)", fmt.Sprintf("%g characters a token; the answer is one `SET` plus %g tokens for the tool call's framing", charsPerToken, toolCallOverheadTokens)},
		{"durations (assumed)", fmt.Sprintf("%g ms for a warm fact API invocation and for an extractor invocation that calls no model; %g s for one that does", apiSeconds*1000, dueSeconds)},
		{"memory", fmt.Sprintf("%d MB, the template's", memoryMB)},
		{"log bytes (assumed)", fmt.Sprintf("%g per fact API invocation, %g per extractor invocation, plus about %g for the record's embedded-metric line", apiLogBytes, extractorLogBytes, emfLineBytes)},
		{"the long message the producer trims", fmt.Sprintf("%s turns of %s characters", docblock.InWords(longTurns), th(longTurnChars))},
	}
	lines := []string{"| profile or assumption | value |", "|---|---|"}
	for _, r := range rows {
		lines = append(lines, "| "+r[0]+" | "+r[1]+" |")
	}
	docblock.Check(t, costDoc, "profile", strings.Join(lines, "\n"))
}

// TestCostDocPrices writes the block prices of docs/cost.md from the
// prices the command computes with, each with the page it was read from.
func TestCostDocPrices(t *testing.T) {
	usd := func(v float64) string { // at least two decimals, as prices are written
		s := strconv.FormatFloat(math.Round(v*1e12)/1e12, 'f', -1, 64)
		whole, frac, _ := strings.Cut(s, ".")
		return "$" + whole + "." + frac + strings.Repeat("0", max(0, 2-len(frac)))
	}
	m := func(v float64) string { return usd(v*1e6) + " per million" }
	k := func(v float64) string { return usd(v*1000) + " per 1,000" }
	kb := func(n int) string { return fmt.Sprintf("%d KB", n/1024) }
	rows := [][3]string{
		{"Lambda requests", m(lambdaPerRequest) + " ✓", "[aws.amazon.com/lambda/pricing](https://aws.amazon.com/lambda/pricing/)"},
		{"Lambda duration, arm64", usd(lambdaArmPerGBs) + " per GB-second ✓", "same page (first 7.5 billion GB-s a month)"},
		{"API Gateway HTTP API", m(apiPerRequest) + " requests †", "[aws.amazon.com/api-gateway/pricing](https://aws.amazon.com/api-gateway/pricing/) (first 300 million; metered in 512 KB)"},
		{"DynamoDB on-demand writes", m(dynamoPerWRU) + " write request units †; a write of up to " + kb(writeUnitBytes) + " is one unit", "[aws.amazon.com/dynamodb/pricing/on-demand](https://aws.amazon.com/dynamodb/pricing/on-demand/) (since the 50 % cut of November 2024)"},
		{"DynamoDB on-demand reads", m(dynamoPerRRU) + " read request units †", "same page; a strongly consistent read of up to " + kb(readUnitBytes) + " is one unit ✓"},
		{"DynamoDB storage", usd(dynamoPerGBMonth) + " per GB-month †", "same page"},
		{"SQS FIFO", m(sqsFIFOPerRequest) + " requests †; every " + kb(sqsChunkBytes) + " chunk of a payload is billed as one request", "[aws.amazon.com/sqs/pricing](https://aws.amazon.com/sqs/pricing/)"},
		{"SQS standard (the idle read's queue)", m(sqsStandardPerRequest) + " requests (the first 100 billion a month) †, in chunks as FIFO", "same page; read 2026-12-06 through transcriptions of it dated March and June 2026, which give the FIFO price above too"},
		{"Bedrock, Amazon Nova Micro", m(novaMicroPerIn) + " input tokens, " + m(novaMicroPerOut) + " output tokens ✓", "[aws.amazon.com/bedrock/pricing](https://aws.amazon.com/bedrock/pricing/) (cross-region inference is billed at the source Region's price)"},
		{"CloudWatch Logs", usd(logsPerGB) + " per GB ingested †", "[aws.amazon.com/cloudwatch/pricing](https://aws.amazon.com/cloudwatch/pricing/)"},
		{"CloudWatch custom metrics, alarms", usd(metricPerMonth) + " per metric-month, " + usd(alarmMetricPerMonth) + " per alarm metric-month (standard resolution) †", "same page"},
		{"AgentCore Memory", "short-term: " + usd(agentCorePerGB) + " per GB ingested, each event billed for at least " + kb(agentCoreMinEvent) + " (since October 2026, replacing $0.25 per 1,000 events) †; long-term: " + k(agentCorePerRecord) + " records stored a month (built-in strategies), " + k(agentCorePerRetrieve) + " retrievals ✓",
			"[aws.amazon.com/bedrock/agentcore/pricing](https://aws.amazon.com/bedrock/agentcore/pricing/); the short-term change as reported in the audit of issue 16. Read again 2026-12-03: the page could not be opened from here, and the newest copies that could (third-party transcriptions of June 2026) predate the change: they show $0.25 per 1,000 new events and the same long-term prices, so the short-term price stays unconfirmed"},
		{"Cognito, Essentials plan", "the first " + docblock.Thousands(cognitoFreeMAU) + " monthly active users of an account free, then " + usd(cognitoEssentialsMAU) + " per MAU †",
			"[aws.amazon.com/cognito/pricing](https://aws.amazon.com/cognito/pricing/), unconfirmed there: read 2026-12-07 through a transcription of the page dated 2026-09-20 (api-evangelist/amazon-cognito, plans/amazon-cognito-plans-pricing.yml), the page's own tables not rendering"},
		{"Cognito, machine-to-machine", k(cognitoM2MPerToken) + " client-credentials token requests (the first 250,000 a month), " + usd(cognitoM2MClientMonth) + " an app client a month †",
			"same page, unconfirmed there: read 2026-12-07 through Vantage's description of the billing code USE1-CUPM2MTokenRequestsFull (updated 2025-04-27, $2.250 per 1,000) and Classmethod's note of 2024-05-13 on the change (Tokyo: $6 an app client, $2.250 per 1,000 requests); AWS's Monitoring costs page lists the two dimensions"},
		{"mem0 Platform", fmt.Sprintf("Hobby free (10,000 memories, 1,000 retrieval calls a month), Starter $19 a month (50,000 memories, 5,000 retrievals), Pro %s a month (unlimited memories, %s retrievals) †", usd(mem0ProMonthly), docblock.Thousands(int(mem0ProRetrievals))), "[mem0.ai/pricing](https://mem0.ai/pricing)"},
	}
	lines := []string{"| part | price | source |", "|---|---|---|"}
	for _, r := range rows {
		lines = append(lines, "| "+strings.Join(r[:], " | ")+" |")
	}
	docblock.Check(t, costDoc, "prices", strings.Join(lines, "\n"))
}
