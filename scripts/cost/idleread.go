package main

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// The idle read: a thread whose newest turns came after its last due
// message gets them read once, after it has been idle for IdleReadSeconds.
// The extractor notes the thread's unread tail when it receives a message
// that is not due (memory.Store.NoteTail: one consistent GetItem of the
// user's record and one conditional PutItem of it) and sends a copy of
// the message to a standard SQS queue, delayed by the idle time (a FIFO
// queue has no per-message delay). When the copy comes back, the
// extractor reads the record (memory.Store.ReadIdle): the copy of the
// thread's newest message, if the tail is still unread, is read in one
// extraction; any other copy (a newer message came, or an extraction read
// the turns since) is dropped there. The extraction of an idle read runs
// here through the real store, as every other (rig.idleReads); the note
// and the dropped copies, whose code is the idle read's own, are counted
// from the requests above.

// Prices and limits of the idle read's queue, US East (N. Virginia).
const (
	// sqsStandardPerRequest: SQS standard queue, per 64 KB chunk of a
	// request, the first 100 billion requests a month
	// (https://aws.amazon.com/sqs/pricing/; the page could not be read
	// from here on 2026-12-06, the price is that of the transcriptions of
	// it dated March and June 2026, with the FIFO price this table
	// carries).
	sqsStandardPerRequest = 0.40 / 1e6
	// sqsMaxDelaySeconds is SQS's longest message timer, 15 minutes
	// (Amazon SQS Developer Guide, "Amazon SQS message timers",
	// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-timers.html,
	// read 2026-12-06): a longer idle time sends the copy again each time
	// it comes back early.
	sqsMaxDelaySeconds = 900
	// defaultIdleReadSeconds is the stack parameter IdleReadSeconds'
	// default, 15 minutes (TestIdleReadSecondsIsTheTemplates holds it to
	// template.yaml's when the template has the parameter).
	defaultIdleReadSeconds = 900
)

// What the idle read's code does per message, in DynamoDB requests on the
// user's record.
const (
	noteGets, noteWrites = 1, 1 // NoteTail: read the record, write it back with a condition
	dropGets             = 1    // ReadIdle of a copy it drops: read the record, write nothing
)

// idleInput is what one day measured of the idle read.
type idleInput struct {
	notDueBytes []int                   // the body of every message that was not due
	tails       []memory.ExtractRequest // the requests that read the tails the day's threads were left with
	reads       int                     // idle reads: model calls
	readDynamo  map[string]int          // their DynamoDB requests
	readBudget  map[string]int          // their budget counter's requests
	inTokens    float64                 // the prompt of an idle read
	outTokens   float64                 // its answer
}

// idleReads runs the idle read of every tail the day left, through the
// store as the extractor runs it, and counts its requests, its model
// calls and the size of the last one's prompt.
func (r *rig) idleReads(ctx context.Context, in *reportInput) error {
	r.counter.take()
	r.budgetCounter.take()
	before := r.stand.calls
	for _, req := range in.idle.tails {
		if _, err := r.store.Extract(ctx, req); err != nil {
			return err
		}
	}
	in.idle.reads = r.stand.calls - before
	in.idle.readDynamo, in.idle.readBudget = r.counter.take(), r.budgetCounter.take()
	var last reportInput
	r.prompt(&last)
	in.idle.inTokens, in.idle.outTokens = last.inTokens, last.outTokens
	return nil
}

// idleDay is a day of the idle read for one active user.
type idleDay struct {
	notDue  float64 // messages not due: each noted and copied
	sends   float64 // times each copy is sent: once, and again per 15 minutes of idle time beyond the first
	reads   float64 // copies that read their thread: model calls
	dropped float64 // copies dropped: superseded, or read already
}

// idleDayOf returns the idle read's day of r at an idle time of seconds
// (0: off, nothing).
func idleDayOf(seconds int, r reportInput) idleDay {
	if seconds <= 0 {
		return idleDay{}
	}
	d := idleDay{notDue: float64(len(r.idle.notDueBytes)), sends: math.Ceil(float64(seconds) / sqsMaxDelaySeconds), reads: float64(r.idle.reads)}
	d.dropped = d.notDue - d.reads
	return d
}

// idleLines returns the month's lines of the idle read of profile p, on
// the record's units of m.
func idleLines(p profile, r reportInput, m month) []priced {
	d, days := idleDayOf(p.idleReadSeconds, r), p.days
	if d.notDue == 0 {
		return nil
	}
	readR, readW := m.units(r.idle.readDynamo)
	reads := (d.notDue*noteGets+d.dropped*dropGets)*m.rru + readR
	writes := d.notDue*noteWrites*m.wru + readW
	budgetW := float64(r.idle.readBudget["UpdateItem"] + r.idle.readBudget["PutItem"]) // a counter item: 1 WRU a write
	sqsReqs := 0.0
	for _, b := range r.idle.notDueBytes {
		sqsReqs += d.sends * sqsRequests(b)
	}
	invocations := d.notDue * d.sends
	gbs := memoryGB * ((invocations-d.reads)*notDueSeconds + d.reads*dueSeconds)
	logGB := invocations * (extractorLogBytes + emfLineBytes) / 1e9
	return []priced{
		{"Bedrock tokens, idle reads", fmt.Sprintf("%.0f idle reads × %.0f input and %.0f output tokens", d.reads*days, r.idle.inTokens, r.idle.outTokens),
			d.reads * days * (r.idle.inTokens*novaMicroPerIn + r.idle.outTokens*novaMicroPerOut)},
		{"DynamoDB, idle reads", fmt.Sprintf("%.0f RRU, %.0f WRU: %.0f tails noted (GetItem, conditional PutItem), %.0f copies dropped (GetItem), %.0f reads (%s a day)",
			reads*days, writes*days, d.notDue*days, d.dropped*days, d.reads*days, sortedOps(r.idle.readDynamo)), days * (reads*dynamoPerRRU + writes*dynamoPerWRU)},
		{"DynamoDB, the budget counter, idle reads", fmt.Sprintf("%.0f WRU (%s a day)", budgetW*days, sortedOps(r.idle.readBudget)), budgetW * days * dynamoPerWRU},
		{"SQS standard, idle copies", fmt.Sprintf("%.0f requests: %.0f copies a day, each sent %.0f time(s) delayed, received and deleted", sqsReqs*days, d.notDue, d.sends), sqsReqs * days * sqsStandardPerRequest},
		{"Lambda, idle copies", fmt.Sprintf("%.0f invocations, %.1f GB-s", invocations*days, gbs*days), days * (invocations*lambdaPerRequest + gbs*lambdaArmPerGBs)},
		{"CloudWatch Logs, idle copies", fmt.Sprintf("%.2f MB ingested", logGB*days*1000), logGB * days * logsPerGB},
	}
}

// idleCost returns what the lines of the idle read cost in m.
func idleCost(p profile, r reportInput, m month) float64 {
	total := 0.0
	for _, l := range idleLines(p, r, m) {
		total += l.cost
	}
	return total
}

// dueMessages returns, for a thread of n answers of two turns each, how
// many of its messages are due at cfg's beat (memory.Store.IsExtractDue)
// and whether its last one is.
func dueMessages(store *memory.Store, n int) (due int, lastDue bool) {
	for k := 1; k <= n; k++ {
		lastDue = store.IsExtractDue(2*k-2, 2*k)
		if lastDue {
			due++
		}
	}
	return due, lastDue
}

// writeIdleRead writes what the idle read adds for one active user: the
// threads that end between beats, the extra model calls, their price, and
// the beat's due messages by the length of a thread.
func writeIdleRead(w io.Writer, p profile, cfg memory.Config, r reportInput, m month) error {
	store, err := memory.New(memorytest.NewRepo(), cfg)
	if err != nil {
		return err
	}
	perThread := p.answersPerDay / p.threadsPerDay
	beatDue, lastDue := dueMessages(store, perThread)
	left := 0
	if !lastDue {
		left = p.threadsPerDay
	}
	d := idleDayOf(p.idleReadSeconds, r)
	fmt.Fprintf(w, "\n## The idle read\n\n")
	if p.idleReadSeconds <= 0 {
		fmt.Fprintf(w, "Switched off (`IdleReadSeconds` 0): the %d threads a day that end between beats are never read to the end.\n", left)
		return nil
	}
	extra := idleCost(p, r, m)
	fmt.Fprintf(w, "`IdleReadSeconds` %d. A thread of the profile has %d answers: at `ExtractEveryTurns` %d, %d of its %d messages are due (`memory.Store.IsExtractDue`) and its last is %s, so %d of the %d threads a day end between beats. "+
		"**Extra model calls per active user: %.0f a day** (%.0f a month), one per thread left with turns unread, on top of the beat's %d a day (%.0f %% more). "+
		"The %.0f messages a day that are not due each note their thread's tail and send one delayed copy; when they come back, %.0f copies read their thread and %.0f are dropped. "+
		"The idle read costs %.4f USD a month of the total above (%.0f %%), and the stack, whatever its users, %d custom metrics more (its %d outcomes, in the table below).\n\n",
		p.idleReadSeconds, perThread, cfg.ExtractEveryTurns, beatDue, perThread, map[bool]string{true: "due", false: "not"}[lastDue], left, p.threadsPerDay,
		d.reads, d.reads*p.days, r.extractionsPerDay, 100*d.reads/float64(r.extractionsPerDay),
		d.notDue, d.reads, d.dropped, extra, 100*extra/m.total, len(extractorMetricNames)*len(idleOutcomes), len(idleOutcomes))
	fmt.Fprintf(w, "| answers in a thread | messages due | last message due | idle reads a day, %d such threads |\n|---:|---:|---|---:|\n", p.threadsPerDay)
	for n := 1; n <= 12; n++ {
		due, last := dueMessages(store, n)
		reads := 0
		if !last {
			reads = p.threadsPerDay
		}
		fmt.Fprintf(w, "| %d | %d | %s | %d |\n", n, due, map[bool]string{true: "yes", false: "no"}[last], reads)
	}
	return nil
}
