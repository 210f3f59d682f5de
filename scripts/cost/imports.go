package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
)

// An import (issue 34): the user pastes what another assistant remembers
// of them; the import route checks the user's daily imports
// (memory.Store.QueueImport: a read and a write of the record, the
// import's queued mark) and sends one
// message on the extraction queue; the extractor reads the list with the
// cheap model, one call a part of at most memory.ImportPartStatements
// statements, at most memory.MaxImportParts calls, each asking the
// tenant's budget first, and writes the proposals and the import's mark
// in one conditional write (memory.Store.Import). rig.imports runs every
// gold import list (eval/gold/imports) through the real store over
// DynamoDB, the real Bedrock adapter and the cost stand-in, which answers
// an import call with the eval stand-in's reading of the list
// (fakebedrock.ImportOperations), and measures what one import costs:
// its model calls, their prompts and answers, its DynamoDB requests and
// its queue message.

// importInput is what the gold import lists measured.
type importInput struct {
	lists                  int            // gold lists imported
	textChars              int            // their characters, all lists
	calls                  int            // model calls, all lists
	inTokens, outTokens    float64        // their tokens, all lists
	dynamo                 map[string]int // DynamoDB requests on the record, all lists (route and extractor)
	budget                 map[string]int // the budget counter's requests, all lists
	itemBytes              int            // the largest record after an import
	msgBytes               int            // the queue messages' bodies, all lists
	systemChars, toolChars int            // the system prompt and tool of the last import call
	maxTokens              int            // the maxTokens an import call asks for
}

// importUser returns the scope of the user who imports the i-th list:
// one a list, so that every import starts from the same record.
func (r *rig) importUser(i int) memory.Scope {
	return memory.Scope{TenantID: r.sc.TenantID, UserID: fmt.Sprintf("u-import-%02d", i)}
}

// imports imports every gold list for a user of its own who has the
// profile's facts (set by hand, not counted), as the route and the
// extractor do, and measures it.
func (r *rig) imports(ctx context.Context, p profile, in *importInput) error {
	cases, err := gold.LoadImports(gold.Default())
	if err != nil {
		return err
	}
	in.dynamo, in.budget = map[string]int{}, map[string]int{}
	for i, c := range cases {
		sc := r.importUser(i)
		for _, kv := range sampleFacts(p.facts) {
			if _, err := r.store.Put(ctx, sc, memory.FactInput{Key: kv[0], Value: kv[1]}); err != nil {
				return err
			}
		}
		r.counter.take()
		r.budgetCounter.take()
		before := r.stand.snapshot()
		// The route's queued mark (with its check of the user's daily
		// imports), then the extractor's import.
		id := "imp-" + strconv.FormatInt(clockStart.UnixMilli(), 10) + "-cost" + strconv.Itoa(i)
		if _, err := r.store.QueueImport(ctx, sc, id, c.Source, clockStart); err != nil {
			return err
		}
		res, err := r.store.Import(ctx, memory.ImportRequest{Scope: sc, ImportID: id, Source: c.Source, Text: c.Text, SentAt: clockStart})
		if err != nil {
			return fmt.Errorf("import %s: %w", c.ID, err)
		}
		if res.Mark.Status != memory.ImportDone {
			return fmt.Errorf("import %s: %s (%s)", c.ID, res.Mark.Status, res.Mark.Reason)
		}
		after := r.stand.snapshot()
		in.lists++
		in.textChars += len([]rune(c.Text))
		in.calls += after.calls - before.calls
		in.inTokens += after.importIn - before.importIn
		in.outTokens += after.importOut - before.importOut
		addOps(in.dynamo, r.counter.take())
		addOps(in.budget, r.budgetCounter.take())
		item, err := r.itemSizeOf(ctx, sc)
		if err != nil {
			return err
		}
		in.itemBytes = max(in.itemBytes, item)
		body, err := json.Marshal(schema.ImportMessage{Version: 1, Kind: schema.ImportKind, TenantID: sc.TenantID, UserID: sc.UserID,
			ImportID: id, Source: c.Source, Text: c.Text, SentAt: clockStart})
		if err != nil {
			return err
		}
		in.msgBytes += len(body)
	}
	in.systemChars, in.toolChars, in.maxTokens = r.stand.systemChars, r.stand.tools, r.stand.maxTokens
	return nil
}

// addOps adds the requests of ops to sum.
func addOps(sum, ops map[string]int) {
	for k, n := range ops {
		sum[k] += n
	}
}

// importPrice is one import priced: its lines and their total.
type importPrice struct {
	lines []priced
	total float64
}

// priceImport prices an import of calls model calls with in and out
// tokens in all, reads and writes DynamoDB requests on a record of
// itemBytes, budgetWrites writes of the budget counter and a queue
// message of msgBytes.
func priceImport(calls, in, out, reads, writes, budgetWrites float64, itemBytes, msgBytes int) importPrice {
	rru, wru := units(itemBytes, readUnitBytes), units(itemBytes, writeUnitBytes)
	gbs := memoryGB * (apiSeconds + calls*dueSeconds)
	ip := importPrice{lines: []priced{
		{"Bedrock input tokens", fmt.Sprintf("%.1f calls, %.0f tokens", calls, in), in * novaMicroPerIn},
		{"Bedrock output tokens", fmt.Sprintf("%.0f tokens", out), out * novaMicroPerOut},
		{"DynamoDB reads", fmt.Sprintf("%.1f consistent GetItem × %.0f RRU (record of %d B)", reads, rru, itemBytes), reads * rru * dynamoPerRRU},
		{"DynamoDB writes", fmt.Sprintf("%.1f writes × %.0f WRU", writes, wru), writes * wru * dynamoPerWRU},
		{"DynamoDB, the tenant's budget counter", fmt.Sprintf("%.1f writes × 1 WRU (%.0f a model call)", budgetWrites, budgetWrites/calls), budgetWrites * dynamoPerWRU},
		{"SQS FIFO", fmt.Sprintf("%.0f requests (a message of %d B: send, receive, delete)", sqsRequests(msgBytes), msgBytes), sqsRequests(msgBytes) * sqsFIFOPerRequest},
		{"API Gateway HTTP API", "1 request (POST /v1/me/imports)", apiPerRequest},
		{"Lambda", fmt.Sprintf("2 invocations (the route, the extractor), %.2f GB-s", gbs), 2*lambdaPerRequest + gbs*lambdaArmPerGBs},
	}}
	for _, l := range ip.lines {
		ip.total += l.cost
	}
	return ip
}

// writeImport writes the section on the price of one import: a typical
// pasted list (the mean of the gold lists, measured) and the largest
// import, and what one user may spend on imports a day.
func writeImport(w io.Writer, p profile, in importInput) {
	if in.lists == 0 {
		return
	}
	n := float64(in.lists)
	reads := float64(in.dynamo["GetItem"]) / n
	writes := float64(in.dynamo["UpdateItem"]+in.dynamo["PutItem"]+in.dynamo["DeleteItem"]) / n
	budgetWrites := float64(in.budget["UpdateItem"]+in.budget["PutItem"]) / n
	typical := priceImport(float64(in.calls)/n, in.inTokens/n, in.outTokens/n, reads, writes, budgetWrites, in.itemBytes, in.msgBytes/in.lists)

	// The largest import: MaxImportParts calls, each with the prompt and
	// the tool, reading MaxImportChars of text between them, each answered
	// with the most tokens a call asks for.
	partTokens := charTokens(in.systemChars) + charTokens(len([]rune(memory.ImportTranscript("")))) + charTokens(in.toolChars)
	parts := float64(memory.MaxImportParts)
	largestMsg := in.msgBytes/in.lists - in.textChars/in.lists + memory.MaxImportChars
	budgetPerCall := float64(in.budget["UpdateItem"]+in.budget["PutItem"]) / float64(in.calls)
	largest := priceImport(parts, parts*partTokens+charTokens(memory.MaxImportChars), parts*float64(in.maxTokens), reads, writes, parts*budgetPerCall, in.itemBytes, largestMsg)

	fmt.Fprintf(w, "\n## One import\n\n")
	fmt.Fprintf(w, "An import of a memory list pasted from another assistant (issue 34), measured on the %d gold import lists of `eval/gold/imports` "+
		"(%.0f characters on average), each imported by a user with the profile's %d facts: the route's queued mark (a read and a write, with its check of the user's daily imports), "+
		"the queue message, the extractor's model calls (`MEMORY_IMPORT` prompt, one call a part) and its one write. "+
		"The answers are the eval stand-in's reading of the lists (`fakebedrock.ImportOperations`), not a model's.\n\n",
		in.lists, float64(in.textChars)/n, p.facts)
	fmt.Fprintf(w, "| what | measured |\n|---|---|\n")
	fmt.Fprintf(w, "| model calls of an import (the mean of the lists) | %.2f (%d calls for %d lists) |\n", float64(in.calls)/n, in.calls, in.lists)
	fmt.Fprintf(w, "| tokens of an import | %.0f input (prompt, part and tool: system %d chars, tool %d chars), %.0f output (the operations) |\n",
		in.inTokens/n, in.systemChars, in.toolChars, in.outTokens/n)
	fmt.Fprintf(w, "| DynamoDB requests of an import, route and extractor | %s (for %d lists) |\n", sortedOps(in.dynamo), in.lists)
	fmt.Fprintf(w, "| the budget counter's requests | %s (for %d lists): every import call counts in the tenant's daily budget |\n", sortedOps(in.budget), in.lists)
	fmt.Fprintf(w, "| record after an import, the largest of the lists' (the DynamoDB lines below use it for both columns) | %d B |\n", in.itemBytes)
	fmt.Fprintf(w, "| the largest import | %d calls (`MaxImportParts`) of at most %d statements (`ImportPartStatements`): %.0f input tokens a call besides the text, %.0f for the text of %d characters (`MaxImportChars`) between them, %d output tokens a call at most (the `maxTokens` it asks for) |\n",
		memory.MaxImportParts, memory.ImportPartStatements, partTokens, charTokens(memory.MaxImportChars), memory.MaxImportChars, in.maxTokens)
	fmt.Fprintf(w, "\n| part | a typical import | the largest import |\n|---|---|---|\n")
	for i, l := range typical.lines {
		fmt.Fprintf(w, "| %s | %s: %.7f | %s: %.7f |\n", l.part, l.usage, l.cost, largest.lines[i].usage, largest.lines[i].cost)
	}
	fmt.Fprintf(w, "| **total, USD** | **%.6f** | **%.6f** |\n", typical.total, largest.total)
	fmt.Fprintf(w, "\nBound: one user may request %d imports in 24 hours (`MaxImportsPerDay`); the next is refused before any call. "+
		"At most %d model calls a user a day on imports, **%.5f USD** at the largest; each call also counts in the tenant's daily budget.\n",
		memory.MaxImportsPerDay, memory.MaxImportsPerDay*memory.MaxImportParts, float64(memory.MaxImportsPerDay)*largest.total)
}

// charTokens is the stand-in's token count of n characters.
func charTokens(n int) float64 { return math.Ceil(float64(n) / charsPerToken) }

// itemSizeOf returns the size of the stored record of sc, uncounted.
func (r *rig) itemSizeOf(ctx context.Context, sc memory.Scope) (int, error) {
	saved := r.sc
	r.sc = sc
	defer func() { r.sc = saved }()
	return r.itemSize(ctx)
}
