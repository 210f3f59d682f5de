package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/memory"
)

// Markers around the part of a doc the command writes.
const (
	beginGenerated = "<!-- begin: written by ./scripts/with-moto.sh go run ./scripts/cost -write . ; do not edit -->"
	endGenerated   = "<!-- end: written by scripts/cost -->"
)

// The load profile of docs/scale.md beyond one user's (docs/cost.md).
const (
	peakHourShare = 0.10 // the busiest hour carries 10 % of a day (one time zone, evening peak)
	quotasRead    = "2026-12-02"
)

// quota is an outside limit: its figure for a US deploy and for one
// outside the US (the same when the Region does not matter), and where it
// comes from.
type quota struct {
	name        string
	us, nonUS   float64
	unit        string
	source, url string
}

// Quotas, AWS's defaults, read on quotasRead; a new account may have less
// (Lambda's concurrency). Bedrock's differ by account and Region: check
// Service Quotas.
var (
	// Bedrock no longer enforces requests a minute on bedrock-runtime:
	// throttling is by tokens a minute alone (Bedrock user guide, "Quotas
	// for the bedrock-runtime endpoint", read 2026-12-02; the AWS release
	// notes of 2026-05-27 removed the RPM rows).
	bedrockTPM = quota{"Bedrock, Nova Micro, cross-Region tokens a minute", 4_000_000, 200_000, "tokens/min",
		"AWS General Reference, Amazon Bedrock service quotas: us-east-1, us-east-2 and us-west-2 4,000,000, each of the other supported Regions 200,000 (the newest copy of the table readable on the date read was published in June 2025: check Service Quotas). In Service Quotas the quota is now called \"Cross-Region InvokeModel tokens per minute for Amazon Nova Micro\", formerly \"Cross-region model inference tokens per minute\"; it counts Converse calls too (Bedrock user guide, Quotas for the bedrock-runtime endpoint, https://docs.aws.amazon.com/bedrock/latest/userguide/quotas-runtime.html, read 2026-12-03); input + maxTokens are reserved when a call starts (Bedrock user guide, How tokens are counted)", "https://docs.aws.amazon.com/general/latest/gr/bedrock.html#limits_bedrock"}
	lambdaAccount = quota{"Lambda concurrent executions, account", 1000, 1000, "environments",
		"Lambda quotas, read 2026-12-07: 1,000 is the default; \"New AWS accounts have reduced concurrency and memory quotas. AWS raises these quotas automatically based on your usage\" (what a new account may get: docs/scale.md, Reserved concurrency)", "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html"}
	eventSourceMax = quota{"SQS event source maximum concurrency", 1000, 1000, "invocations",
		"Lambda: SQS scaling", "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html"}
	apiAccount = quota{"API Gateway throttle, account and Region", 10000, 10000, "requests/s",
		"API Gateway quotas, read 2026-12-03: 10,000 requests/s with a burst of 5,000 in most Regions; 2,500 with a burst of 1,250 in 13: Africa (Cape Town), Europe (Milan), Asia Pacific (Jakarta), Middle East (UAE), Asia Pacific (Hyderabad), Asia Pacific (Melbourne), Europe (Spain), Europe (Zurich), Israel (Tel Aviv), Canada West (Calgary), Asia Pacific (Malaysia), Asia Pacific (Thailand) and Mexico (Central), where this limit binds at a quarter of the users", "https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html"}
	tableFirstWrites = quota{"DynamoDB on-demand, a new table's first writes", 4000, 4000, "WRU/s",
		"DynamoDB on-demand scaling (doubles its previous peak within 30 minutes)", "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html"}
	tableQuota = quota{"DynamoDB table throughput quota", 40000, 40000, "units/s",
		"DynamoDB quotas", "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html"}
	sqsFIFO = quota{"SQS FIFO, high-throughput mode", 70000, 70000, "transactions/s an action",
		"SQS FIFO high throughput (the largest Regions; less in others: check the Region's)", "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/high-throughput-fifo.html"}
)

// stack is what the docs need of template.yaml: its parameters' defaults
// and its alarms.
type stack struct {
	params               map[string]float64
	alarms, alarmMetrics int
	// userPoolTier is the feature plan of the template's user pool, ""
	// when it makes none.
	userPoolTier string
	// idleConcurrency is the MaximumConcurrency of the idle queue's event
	// source, 0 when the template has none.
	idleConcurrency int
	// gateway is the app client of the gateway's machine tokens.
	gateway gatewayClient
}

// loadStack reads template.yaml's numeric parameter defaults and counts
// its alarms and the metrics they watch.
func loadStack(root string) (stack, error) {
	t, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return stack{}, err
	}
	st := stack{params: map[string]float64{}}
	if st.userPoolTier, err = userPoolTier(root); err != nil {
		return stack{}, err
	}
	if st.gateway, err = gatewayClients(root); err != nil {
		return stack{}, err
	}
	for _, name := range []string{"ExtractorMaxConcurrency", "ReadRateLimit", "ReadBurstLimit", "EditRateLimit", "ReadReservedConcurrency", "ExtractEveryTurns"} {
		v, ok := t.ParameterDefault(name)
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return stack{}, fmt.Errorf("template.yaml: parameter %s has no numeric default", name)
		}
		st.params[name] = f
	}
	// The stack as deployed with the defaults; a template whose issuer has
	// no default (an external one) is given one.
	o := samtemplate.Options{Region: "us-east-1", AccountID: "123456789012", StackName: "usermemory"}
	app, err := t.Resolve(o)
	if err != nil {
		o.Parameters = map[string]string{"JwtIssuer": "https://issuer.example", "JwtAudience": "a"}
		if app, err = t.Resolve(o); err != nil {
			return stack{}, err
		}
	}
	for _, e := range app.SQSEvents {
		if e.Queue == "IdleQueue" && e.Enabled {
			st.idleConcurrency = e.MaxConcurrency
		}
	}
	for id, f := range app.Functions {
		if f.MemoryMB != memoryMB {
			return stack{}, fmt.Errorf("template.yaml: %s has %d MB of memory; scripts/cost prices %d", id, f.MemoryMB, memoryMB)
		}
	}
	for id, p := range app.Properties {
		if !strings.HasSuffix(id, "Alarm") || p["AlarmActions"] == nil {
			continue
		}
		st.alarms++
		n := 0
		for _, m := range asList(p["Metrics"]) {
			if mm, _ := m.(map[string]any); mm["MetricStat"] != nil {
				n++
			}
		}
		st.alarmMetrics += max(n, 1)
	}
	return st, nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

// perUser is what one daily user asks of the service in the peak second.
type perUser struct {
	// extractions are the beat's model calls and idleReads the idle
	// read's (through an event source of their own); notDue the messages
	// that call no model, and idleDrops the idle copies that call none
	// (each one Lambda invocation); notes the idle read's writes of a
	// tail.
	messages, extractions, reads, edits float64 // a second
	idleReads, notDue, idleDrops, notes float64 // a second
	callTokens, reservedTokens          float64 // a model call
	wru, rru                            float64 // a write, a consistent read
}

func peakPerUser(p profile, r reportInput) perUser {
	perSec := func(perDay float64) float64 { return perDay * peakHourShare / 3600 }
	d := idleDayOf(p.idleReadSeconds, r)
	u := perUser{
		messages:       perSec(float64(p.answersPerDay)),
		extractions:    perSec(float64(r.extractionsPerDay)),
		idleReads:      perSec(d.reads),
		notDue:         perSec(float64(p.answersPerDay - r.extractionsPerDay)),
		idleDrops:      perSec(d.notDue*d.sends - d.reads),
		notes:          perSec(d.notDue * noteWrites),
		callTokens:     r.inTokens + r.outTokens,
		reservedTokens: r.inTokens + float64(r.maxTokens),
		wru:            units(r.steady, writeUnitBytes),
		rru:            units(r.steady, readUnitBytes),
	}
	if p.httpReads {
		u.reads = u.messages
	}
	u.edits = perSec(p.pageVisitsWeek / 7)
	return u
}

// calls returns the model calls a second: the beat's and the idle
// read's.
func (u perUser) calls() float64 { return u.extractions + u.idleReads }

// limit is a limit of the service and the daily users at which it binds,
// for a US deploy and for one outside the US.
type limit struct {
	param                string // the template parameter that sets it, if one does
	name, figure, source string
	us, nonUS            float64 // daily users
	remedy               string
}

func limits(p profile, st stack, u perUser) []limit {
	at := func(capacity, demand float64) float64 { return capacity / demand }
	conc := st.params["ExtractorMaxConcurrency"]
	both := func(l limit) limit { l.nonUS = l.us; return l }
	writes := (u.calls() + u.notes) * u.wru
	if p.budget {
		writes += u.calls() * 2 // the counter: Allow and Record, 1 WRU each
	}
	ls := []limit{
		both(limit{"ExtractorMaxConcurrency", "Extractor concurrency (`ExtractorMaxConcurrency`)", fmt.Sprintf("%.0f at %.0f s an extraction", conc, dueSeconds), "template.yaml",
			at(conc/dueSeconds, u.extractions), 0, "raise it with the Bedrock quota; messages wait meanwhile (`ExtractionQueueAgeAlarm`)"}),
		{"", bedrockTPM.name + ", reserved", fmt.Sprintf("%s / %s tokens a minute, %.0f reserved a call", human(bedrockTPM.us), human(bedrockTPM.nonUS), u.reservedTokens), bedrockTPM.url,
			at(bedrockTPM.us/60/u.reservedTokens, u.calls()), at(bedrockTPM.nonUS/60/u.reservedTokens, u.calls()), "a quota increase; `ExtractEveryTurns` higher"},
		both(limit{"ReadRateLimit", "Read route throttle (`ReadRateLimit`)", fmt.Sprintf("%.0f requests/s a route", st.params["ReadRateLimit"]), "template.yaml",
			at(st.params["ReadRateLimit"], u.reads), 0, "raise the parameter; read the facts with the Go packages"}),
		both(limit{"", lambdaAccount.name, grouped(lambdaAccount.us), lambdaAccount.url,
			at(lambdaAccount.us, u.calls()*dueSeconds+(u.notDue+u.idleDrops)*notDueSeconds+u.reads*apiSeconds), 0, "a quota increase"}),
		both(limit{"", eventSourceMax.name, grouped(eventSourceMax.us) + " a queue", eventSourceMax.url, at(eventSourceMax.us/dueSeconds, u.extractions), 0, "N queues (below)"}),
		both(limit{"", apiAccount.name, grouped(apiAccount.us) + " requests/s", apiAccount.url, at(apiAccount.us, u.reads+u.edits), 0, "a quota increase; Go reads"}),
		both(limit{"", tableFirstWrites.name, grouped(tableFirstWrites.us) + " WRU/s", tableFirstWrites.url, at(tableFirstWrites.us, writes), 0, "warm throughput before launch"}),
		both(limit{"", tableQuota.name, grouped(tableQuota.us) + " WRU/s", tableQuota.url, at(tableQuota.us, writes), 0, "a quota increase"}),
		both(limit{"", sqsFIFO.name, grouped(sqsFIFO.us) + " sends/s", sqsFIFO.url, at(sqsFIFO.us, u.messages), 0, "none needed"}),
	}
	if st.idleConcurrency > 0 && u.idleReads > 0 {
		ls = append(ls, both(limit{"", "Idle read concurrency (the idle queue's event source, `MaximumConcurrency`)", fmt.Sprintf("%d at %.0f s a read", st.idleConcurrency, dueSeconds), "template.yaml",
			at(float64(st.idleConcurrency)/dueSeconds, u.idleReads), 0, "raise `ExtractorMaxConcurrency`, which both queues' event sources take; copies wait in the idle queue meanwhile"}))
	}
	// A reservation binds only when the template sets one by default
	// (docs/scale.md, "Reserved concurrency"); without, the reads share
	// the account's concurrency, the Lambda row.
	if r := st.params["ReadReservedConcurrency"]; r > 0 {
		ls = append(ls, both(limit{"ReadReservedConcurrency", "Reads' reserved concurrency (`ReadReservedConcurrency`)", fmt.Sprintf("%.0f at %.0f ms a read", r, apiSeconds*1000), "template.yaml",
			at(r/apiSeconds, u.reads), 0, "raise the parameter"}))
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].us < ls[j].us })
	return ls
}

// scaleDoc writes docs/scale.md's generated part.
func scaleDoc(w io.Writer, p profile, cfg memory.Config, r reportInput, st stack) {
	u := peakPerUser(p, r)
	d := idleDayOf(p.idleReadSeconds, r)
	fmt.Fprintf(w, "Per daily user (docs/cost.md's profile, measured by `scripts/cost`): %d answers, so %d messages and %d fact reads over HTTP, of which %d extractions (`ExtractEveryTurns` %d), and %.0f idle reads (`IdleReadSeconds` %d): %.0f model calls. ",
		p.answersPerDay, p.answersPerDay, map[bool]int{true: p.answersPerDay}[p.httpReads], r.extractionsPerDay, cfg.ExtractEveryTurns,
		d.reads, p.idleReadSeconds, float64(r.extractionsPerDay)+d.reads)
	fmt.Fprintf(w, "Per extraction: %.0f input and %.0f output tokens, `maxTokens` %d (what the adapter asked for), so %.0f tokens of quota reserved while it runs; one write of the %d-byte record (%.0f WRU) and one consistent read (%.0f RRU)",
		r.inTokens, r.outTokens, r.maxTokens, u.reservedTokens, r.steady, u.wru, u.rru)
	if p.budget {
		fmt.Fprintf(w, ", and the budget counter's %s", sortedOps(r.budgetDynamo))
	}
	fmt.Fprintf(w, ". The busiest hour carries %.0f %% of a day.\n\n", peakHourShare*100)

	fmt.Fprintf(w, "| daily users | messages/s at peak | extractions and idle reads/s | model calls/min | tokens/min used | tokens/min reserved | fact reads/s | limits passed, US | limits passed, outside the US |\n")
	fmt.Fprintf(w, "|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	ls := limits(p, st, u)
	for _, n := range []float64{1e4, 1e5, 1e6, 1e7} {
		var us, non []string
		for i, l := range ls {
			if l.us < n {
				us = append(us, strconv.Itoa(i+1))
			}
			if l.nonUS < n {
				non = append(non, strconv.Itoa(i+1))
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", human(n), human(n*u.messages), human(n*u.calls()),
			human(n*u.calls()*60), human(n*u.calls()*60*u.callTokens), human(n*u.calls()*60*u.reservedTokens), human(n*u.reads),
			orNone(us), orNone(non))
	}
	fmt.Fprintf(w, "\nThe limits, numbered in the order they bind for a US deploy (the numbers the table above names):\n\n")
	fmt.Fprintf(w, "| # | limit | default figure | binds at, US | binds at, outside the US | remedy |\n|---:|---|---|---:|---:|---|\n")
	for i, l := range ls {
		src := l.name
		if strings.HasPrefix(l.source, "https://") {
			src = "[" + l.name + "](" + l.source + ")"
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s |\n", i+1, src, l.figure, human(l.us), human(l.nonUS), l.remedy)
	}
	fmt.Fprintf(w, "\nQuotas used (AWS's defaults, read %s; a new account may have less, an account's own are in Service Quotas):\n\n", quotasRead)
	fmt.Fprintf(w, "| quota | US | outside the US | source |\n|---|---:|---:|---|\n")
	for _, q := range []quota{bedrockTPM, lambdaAccount, eventSourceMax, apiAccount, tableFirstWrites, tableQuota, sqsFIFO} {
		fmt.Fprintf(w, "| %s | %s | %s | [%s](%s) |\n", q.name, human(q.us), human(q.nonUS), q.source, q.url)
	}
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// human writes n with two significant digits and a k/M suffix past 10,000.
func human(n float64) string {
	switch {
	case n >= 1e6:
		return strconv.FormatFloat(round2(n/1e6), 'f', -1, 64) + " M"
	case n >= 1e4:
		return strconv.FormatFloat(round2(n/1e3), 'f', -1, 64) + " k"
	case n >= 100:
		return strconv.FormatFloat(round2(n), 'f', 0, 64)
	}
	return strconv.FormatFloat(round2(n), 'f', -1, 64)
}

// grouped writes n, rounded to a whole number, with its thousands
// grouped by commas: 10000 is "10,000".
func grouped(n float64) string {
	s := strconv.FormatFloat(n, 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// round2 rounds n to two significant digits.
func round2(n float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(n, 'g', 2, 64), 64)
	return r
}

// render measures at profile p and returns the generated parts of
// docs/cost.md and docs/scale.md, by file name, and the limits in the
// order they bind.
func render(ctx context.Context, endpoint string, p profile, root string) (map[string]string, []limit, error) {
	st, err := loadStack(root)
	if err != nil {
		return nil, nil, err
	}
	var cost, scale strings.Builder
	var ls []limit
	var rerr error
	err = measure(ctx, endpoint, p, func(cfg memory.Config, r reportInput) {
		rerr = report(&cost, p, cfg, r, st)
		scaleDoc(&scale, p, cfg, r, st)
		ls = limits(p, st, peakPerUser(p, r))
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, nil, err
	}
	return map[string]string{"cost.md": cost.String(), "scale.md": scale.String()}, ls, nil
}

// replaceGenerated returns doc with the text between its markers replaced
// by gen.
func replaceGenerated(doc, gen string) (string, error) {
	i, j := strings.Index(doc, beginGenerated), strings.Index(doc, endGenerated)
	if i < 0 || j < i {
		return "", errors.New("no markers " + beginGenerated + " … " + endGenerated)
	}
	return doc[:i+len(beginGenerated)] + "\n\n" + gen + "\n" + doc[j:], nil
}

// generated returns the text between doc's markers, as replaceGenerated
// writes it.
func generated(doc string) (string, bool) {
	i, j := strings.Index(doc, beginGenerated), strings.Index(doc, endGenerated)
	if i < 0 || j < i {
		return "", false
	}
	return doc[i+len(beginGenerated)+2 : j-1], true
}

func slicesSorted(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
