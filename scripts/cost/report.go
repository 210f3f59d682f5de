package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/usermemory/usermemory/memory"
)

// Prices: US East (N. Virginia), on-demand, read 2026-12-01 from the AWS
// pricing pages named in docs/cost.md.
const (
	lambdaPerRequest     = 0.20 / 1e6   // per request
	lambdaArmPerGBs      = 0.0000133334 // per GB-second, arm64
	apiPerRequest        = 1.00 / 1e6   // HTTP API, first 300 million
	dynamoPerWRU         = 0.625 / 1e6  // on-demand write request unit
	dynamoPerRRU         = 0.125 / 1e6  // on-demand read request unit
	dynamoPerGBMonth     = 0.25         // standard table class storage
	sqsFIFOPerRequest    = 0.50 / 1e6   // per sqsChunkBytes chunk of a request
	novaMicroPerIn       = 0.035 / 1e6  // per input token
	novaMicroPerOut      = 0.14 / 1e6   // per output token
	logsPerGB            = 0.50         // CloudWatch Logs ingestion
	agentCorePerGB       = 1.00         // short-term memory, per GB ingested (since October 2026)
	agentCoreMinEvent    = 12 * 1024    // bytes: the least an event is billed for
	metricPerMonth       = 0.30         // CloudWatch custom metric a month (first 10,000)
	alarmMetricPerMonth  = 0.10         // CloudWatch standard-resolution alarm, per metric a month
	agentCorePerRecord   = 0.75 / 1000  // long-term record stored a month (built-in strategy)
	agentCorePerRetrieve = 0.50 / 1000  // long-term retrieval
	mem0ProMonthly       = 249.0        // mem0 Platform Pro plan a month
	mem0ProRetrievals    = 50000.0      // retrieval calls it includes a month
)

// What one billed unit covers, in bytes, from the same pages.
const (
	sqsChunkBytes  = 64 * 1024 // SQS: every 64 KB chunk of a payload is one request
	readUnitBytes  = 4 * 1024  // DynamoDB: a strongly consistent read of up to 4 KB is one RRU
	writeUnitBytes = 1024      // DynamoDB: a write of up to 1 KB is one WRU
)

// units returns the billed units of a payload of n bytes at per bytes a
// unit.
func units(n, per int) float64 { return math.Ceil(float64(n) / float64(per)) }

// sqsRequests returns the SQS requests one message of n bytes is billed
// for: the send and the receive of the body in chunks, and the delete.
func sqsRequests(n int) float64 { return 2*units(n, sqsChunkBytes) + 1 }

// Assumptions that are not measured here (stated in the table).
const (
	charsPerToken          = 4.0  // English text, a common estimate for Nova's tokenizer
	toolCallOverheadTokens = 20.0 // the tool call's framing in the answer
	memoryMB               = 256  // template.yaml's Globals MemorySize (loadStack holds it there)
	// memoryGB is what Lambda bills memory in: a GB is 1,024 MB, so 256 MB
	// is 0.25 GB ("the amount of memory you allocate … 512 MB … 0.5 GB",
	// the examples of https://aws.amazon.com/lambda/pricing/, read
	// 2026-12-03).
	memoryGB          = memoryMB / 1024.0
	apiSeconds        = 0.020 // a warm fact API invocation
	notDueSeconds     = 0.020 // an extractor invocation that calls no model
	dueSeconds        = 1.0   // an extractor invocation with a model call
	apiLogBytes       = 600.0 // START/END/REPORT and one request line
	extractorLogBytes = 900.0 // the same and one record line
	emfLineBytes      = 700.0 // the record's embedded-metric line (functions/extractor observe)
	itemOverheadBytes = 100.0 // DynamoDB's per-item storage overhead
)

// report writes docs/cost.md's measured part: the measured figures, a
// month of one active user priced, what the idle read adds to it, what
// the identity costs, the same profile on two other services, and what the whole stack costs
// whatever its users.
func report(w io.Writer, p profile, cfg memory.Config, r reportInput, st stack) error {
	m := priceMonth(p, r)
	writeMeasured(w, p, r, m)
	writeMonth(w, p, cfg, m)
	if err := writeIdleRead(w, p, cfg, r, m); err != nil {
		return err
	}
	writeIdentity(w, p, st)
	writeElsewhere(w, p, r, m)
	writeImport(w, p, r.imports)
	writeStack(w, p, st)
	writeIdle(w, st)
	return nil
}

// month is a month of one active user: its volumes and priced lines.
type month struct {
	visits, messages, extractions float64
	rru, wru                      float64 // units of one consistent read and one write of the record
	avgBytes                      float64 // an SQS message on average
	lines                         []priced
	total                         float64
}

// priced is one line of the month's bill.
type priced struct {
	part, usage string
	cost        float64
}

// units returns the read and write units of the DynamoDB requests ops,
// each on a record of the month's size.
func (m month) units(ops map[string]int) (reads, writes float64) {
	for op, n := range ops {
		switch op {
		case "GetItem":
			reads += float64(n) * m.rru
		case "UpdateItem", "PutItem", "DeleteItem":
			writes += float64(n) * m.wru
		case "TransactWriteItems":
			writes += float64(n) * 2 * m.wru
		}
	}
	return reads, writes
}

// priceMonth prices a month of profile p from what was measured.
func priceMonth(p profile, r reportInput) month {
	days := p.days
	m := month{visits: p.pageVisitsWeek * days / 7, messages: float64(p.answersPerDay) * days,
		extractions: float64(r.extractionsPerDay) * days,
		rru:         units(r.steady, readUnitBytes),  // a strongly consistent GetItem
		wru:         units(r.steady, writeUnitBytes), // an UpdateItem or PutItem
	}
	gatewayReads := 0.0
	if p.httpReads {
		gatewayReads = float64(p.answersPerDay) * days
	}
	apiRequests := gatewayReads + 2*m.visits

	dayR, dayW := m.units(r.dayDynamo)
	getR, getW := m.units(r.getDynamo)
	putR, putW := m.units(r.putDynamo)
	reads := dayR*days + getR*(gatewayReads+m.visits) + putR*m.visits
	writes := dayW*days + getW*(gatewayReads+m.visits) + putW*m.visits

	sqsReqs := 0.0
	totalBytes := 0
	for _, b := range r.msgBytes {
		sqsReqs += sqsRequests(b)
		totalBytes += b
	}
	sqsReqs *= days
	m.avgBytes = float64(totalBytes) / float64(len(r.msgBytes))

	lambdaInv := m.messages + apiRequests
	gbs := memoryGB * (apiRequests*apiSeconds + (m.messages-m.extractions)*notDueSeconds + m.extractions*dueSeconds)
	logGB := (apiRequests*apiLogBytes + m.messages*(extractorLogBytes+emfLineBytes)) / 1e9
	m.lines = []priced{
		{"Lambda requests", fmt.Sprintf("%.0f invocations (%.0f extractor, %.0f fact API)", lambdaInv, m.messages, apiRequests), lambdaInv * lambdaPerRequest},
		{"Lambda duration (arm64)", fmt.Sprintf("%.1f GB-s", gbs), gbs * lambdaArmPerGBs},
		{"API Gateway HTTP API", fmt.Sprintf("%.0f requests", apiRequests), apiRequests * apiPerRequest},
		{"DynamoDB reads", fmt.Sprintf("%.0f RRU (%.0f per consistent GetItem of %d B)", reads, m.rru, r.steady), reads * dynamoPerRRU},
		{"DynamoDB writes", fmt.Sprintf("%.0f WRU (%.0f per write of %d B)", writes, m.wru, r.steady), writes * dynamoPerWRU},
		{"DynamoDB storage", fmt.Sprintf("%d B item", r.steady), (float64(r.steady) + itemOverheadBytes) / 1e9 * dynamoPerGBMonth},
		{"SQS FIFO", fmt.Sprintf("%.0f requests in %d KB chunks (messages of %.0f B on average)", sqsReqs, sqsChunkBytes/1024, m.avgBytes), sqsReqs * sqsFIFOPerRequest},
		{"Bedrock input tokens", fmt.Sprintf("%.0f extractions × %.0f tokens", m.extractions, r.inTokens), m.extractions * r.inTokens * novaMicroPerIn},
		{"Bedrock output tokens", fmt.Sprintf("%.0f extractions × %.0f tokens", m.extractions, r.outTokens), m.extractions * r.outTokens * novaMicroPerOut},
		{"CloudWatch Logs", fmt.Sprintf("%.2f MB ingested (with the extractor's embedded-metric lines)", logGB*1000), logGB * logsPerGB},
	}
	if p.budget {
		// A counter item is under writeUnitBytes: one write unit a write.
		budgetW := float64(r.budgetDynamo["UpdateItem"]+r.budgetDynamo["PutItem"]) * days
		m.lines = append(m.lines, priced{"DynamoDB, the tenant's budget counter", fmt.Sprintf("%.0f WRU (%s a day, 1 WRU each: a counter item is under %d KB)", budgetW, sortedOps(r.budgetDynamo), writeUnitBytes/1024), budgetW * dynamoPerWRU})
	}
	m.lines = append(m.lines, idleLines(p, r, m)...)
	for _, l := range m.lines {
		m.total += l.cost
	}
	return m
}

// writeMeasured writes the table of what was measured.
func writeMeasured(w io.Writer, p profile, r reportInput, m month) {
	fmt.Fprintf(w, "## Measured\n\n")
	fmt.Fprintf(w, "| what | measured |\n|---|---|\n")
	fmt.Fprintf(w, "| record item, %d facts, no watermark | %d B |\n", r.facts, r.factsOnly)
	marks := r.steady - r.factsOnly - r.history
	fmt.Fprintf(w, "| record item, %d facts and %d thread watermarks (MaxThreads) | %d B (watermarks: %d B, %.0f%% of the item; the previous values of the fact each extraction changes: %d B) |\n",
		r.facts, r.maxThreads, r.steady, marks, 100*float64(marks)/float64(r.steady), r.history)
	fmt.Fprintf(w, "| units of one write / one consistent read | %.0f WRU / %.0f RRU with the watermarks, %.0f WRU / %.0f RRU without |\n",
		m.wru, m.rru, units(r.factsOnly, writeUnitBytes), units(r.factsOnly, readUnitBytes))
	fmt.Fprintf(w, "| the same, the watermarks of uncounted messages (digests) | %d B (%.1f B a watermark): %.0f WRU / %.0f RRU |\n",
		r.steadyDigests, float64(r.steadyDigests-r.factsOnly-r.historyDigests)/float64(r.maxThreads), units(r.steadyDigests, writeUnitBytes), units(r.steadyDigests, readUnitBytes))
	perWatermark := float64(marks) / float64(r.maxThreads)
	fmt.Fprintf(w, "| watermarks with which a write is back to 2 WRU | %.0f or fewer (%.1f B a watermark) |\n",
		math.Floor((2*writeUnitBytes-float64(r.factsOnly))/perWatermark), perWatermark)
	fmt.Fprintf(w, "| DynamoDB requests, one day (%d messages, %d extractions) | %s |\n", p.answersPerDay, r.extractionsPerDay, sortedOps(r.dayDynamo))
	fmt.Fprintf(w, "| DynamoDB requests, GET facts | %s |\n", sortedOps(r.getDynamo))
	fmt.Fprintf(w, "| DynamoDB requests, PUT one fact | %s |\n", sortedOps(r.putDynamo))
	fmt.Fprintf(w, "| prompt of one extraction | system %d chars, transcript %d chars, tool %d chars: %.0f input tokens at %.0f chars a token |\n",
		r.systemChars, r.transcriptChars, r.toolChars, r.inTokens, charsPerToken)
	fmt.Fprintf(w, "| answer of one extraction | %.0f output tokens (one SET, and %.0f for the tool call) |\n", r.outTokens, toolCallOverheadTokens)
	fmt.Fprintf(w, "| SQS message, profile (average of %d) | %.0f B |\n", len(r.msgBytes), m.avgBytes)
	fmt.Fprintf(w, "| SQS message, %d turns of %d chars | before trimming %d B (%0.f chunks), after %d B (%.0f chunk) |\n",
		longTurns, longTurnChars, r.longBefore, units(r.longBefore, sqsChunkBytes), r.longAfter, units(r.longAfter, sqsChunkBytes))
}

// writeMonth writes the month of one active user, priced.
func writeMonth(w io.Writer, p profile, cfg memory.Config, m month) {
	fmt.Fprintf(w, "\n## A month of one active user\n\n")
	fmt.Fprintf(w, "Profile: %d answers a day over %d threads, turns of %d (user) and %d (assistant) characters, ExtractEveryTurns %d, IdleReadSeconds %d, %d facts, %.0f page visit(s) a week (one GET, one PUT), gateway reads over HTTP: %v; %.0f days.\n\n",
		p.answersPerDay, p.threadsPerDay, p.userChars, p.assistantChars, cfg.ExtractEveryTurns, p.idleReadSeconds, p.facts, p.pageVisitsWeek, p.httpReads, p.days)
	fmt.Fprintf(w, "| part | usage a month | USD a month |\n|---|---|---:|\n")
	for _, l := range m.lines {
		fmt.Fprintf(w, "| %s | %s | %.5f |\n", l.part, l.usage, l.cost)
	}
	fmt.Fprintf(w, "| **total** | | **%.4f** |\n", m.total)
}

// elsewhere prices the month m of profile p on AgentCore Memory (ac,
// for its eventGB of events) and on mem0's Pro plan shared (m0), both
// for the same retrievals.
func elsewhere(p profile, r reportInput, m month) (retrievals, eventGB, ac, m0 float64) {
	retrievals = float64(p.answersPerDay)*p.days + m.visits
	eventGB = m.messages * math.Max(m.avgBytes, agentCoreMinEvent) / 1e9
	ac = eventGB*agentCorePerGB + float64(r.facts)*agentCorePerRecord + retrievals*agentCorePerRetrieve
	m0 = mem0ProMonthly / (mem0ProRetrievals / retrievals)
	return retrievals, eventGB, ac, m0
}

// writeElsewhere writes what the same profile costs on AgentCore Memory
// and mem0, and what trimming saves on SQS.
func writeElsewhere(w io.Writer, p profile, r reportInput, m month) {
	days := p.days
	retrievals, eventGB, ac, m0 := elsewhere(p, r, m)
	fmt.Fprintf(w, "\n## The same profile elsewhere\n\n")
	fmt.Fprintf(w, "| service | billed for | USD a month |\n|---|---|---:|\n")
	fmt.Fprintf(w, "| usermemory (above) | | %.4f |\n", m.total)
	fmt.Fprintf(w, "| Amazon Bedrock AgentCore Memory | %.0f events (%.4f GB at %d B at least each), %d long-term records stored, %.0f retrievals | %.4f |\n",
		m.messages, eventGB, agentCoreMinEvent, r.facts, retrievals, ac)
	fmt.Fprintf(w, "| mem0 Platform, Pro plan shared | %.0f retrievals of the plan's %.0f a month | %.4f |\n", retrievals, mem0ProRetrievals, m0)
	fmt.Fprintf(w, "\nSQS before and after trimming, for a month of such long messages (%d a day): %.4f USD before, %.4f after.\n",
		p.answersPerDay, float64(p.answersPerDay)*days*sqsRequests(r.longBefore)*sqsFIFOPerRequest,
		float64(p.answersPerDay)*days*sqsRequests(r.longAfter)*sqsFIFOPerRequest)
}

// writeStack writes what the whole stack costs whatever its users: the
// extractor's custom metrics and the template's alarms.
func writeStack(w io.Writer, p profile, st stack) {
	outcomes := everyDayOutcomes
	if p.idleReadSeconds > 0 {
		outcomes = append(slices.Clone(outcomes), idleOutcomes...)
	}
	metrics := float64(len(extractorMetricNames)*len(outcomes) + len(extractorCountNames))
	fmt.Fprintf(w, "\n## The whole stack, whatever its users\n\n")
	fmt.Fprintf(w, "| part | count | USD a month |\n|---|---|---:|\n")
	fmt.Fprintf(w, "| CloudWatch custom metrics | %d metrics of the extractor × %d outcomes seen every day (%s), and %d screening counts kept once = %.0f | %.2f |\n",
		len(extractorMetricNames), len(outcomes), strings.Join(outcomes, ", "), len(extractorCountNames), metrics, metrics*metricPerMonth)
	fmt.Fprintf(w, "| CloudWatch alarms | %d alarms of template.yaml watching %d metrics | %.2f |\n",
		st.alarms, st.alarmMetrics, float64(st.alarmMetrics)*alarmMetricPerMonth)
	fmt.Fprintf(w, "| **total** | | **%.2f** |\n", metrics*metricPerMonth+float64(st.alarmMetrics)*alarmMetricPerMonth)
}

// extractorMetricNames are the metrics of the extractor's embedded-metric
// line (functions/extractor observe.go) kept per outcome, and
// extractorCountNames those kept once, under the kind alone.
var (
	extractorMetricNames = []string{"Records", "Retried", "ModelCalls", "InputTokens", "OutputTokens", "CacheReadTokens", "CacheWriteTokens", "Duration"}
	extractorCountNames  = []string{"Sets", "Deletes", "Forgotten", "Unsupported", "Secrets", "Ended", "Pending"}
)

// everyDayOutcomes are the outcomes a working stack reports every day;
// each other outcome seen in a month adds a metric per name.
var everyDayOutcomes = []string{"not_due", "changed", "unchanged", "duplicate", "no_turns"}

// idleOutcomes are the outcomes the idle read adds every day when it is
// on: a tail noted, a copy dropped as superseded, a copy dropped because
// its turns were read already (the idle change's memory.OutcomeNoted,
// OutcomeSuperseded and OutcomeAlreadyRead).
var idleOutcomes = []string{"idle_noted", "idle_superseded", "idle_already_read"}
