package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/web"
)

// defaultImportSource is the source of an /import that names none.
const defaultImportSource = "another assistant"

// importHelp says how to import and what to ask the old assistant, with
// the page's prompts (web.ImportPrompts).
func importHelp() string {
	var b strings.Builder
	b.WriteString("usage: /import FILE [SOURCE]  (SOURCE: ChatGPT, Claude, Gemini or any name; default \"" + defaultImportSource + "\")\n")
	b.WriteString("Ask the old assistant this, save its answer in FILE, then /import it:\n")
	prompts := web.ImportPrompts()
	for _, source := range []string{"ChatGPT", "Claude", "Gemini", ""} {
		name := source
		if name == "" {
			name = "any other"
		}
		fmt.Fprintf(&b, "  %s:\n%s\n", name, indent(indent(prompts[source])))
	}
	return b.String()
}

// importFile imports the memory list in the file arg names (arg is "FILE
// [SOURCE]"), through the gateway as a host does (the import route's
// path: the list checked, the message queued, the extractor reading it),
// waits for it, and says what it proposed and left out, then lists what
// waits for the user's review. /keep all and /discard all then answer for
// all of it.
func (c *chatSession) importFile(ctx context.Context, arg string) error {
	file, source, _ := strings.Cut(strings.TrimSpace(arg), " ")
	source = strings.TrimSpace(source)
	if file == "" {
		fmt.Fprint(c.out, importHelp())
		return nil
	}
	if source == "" {
		source = defaultImportSource
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	mark, err := c.gw.Import(ctx, c.sc, memory.ImportText{Source: source, Text: string(text)})
	var me *memory.Error
	if errors.As(err, &me) && me.UserMessage != "" {
		fmt.Fprintf(c.out, "not imported: %s\n", me.UserMessage)
		return nil
	}
	if err != nil {
		return err
	}
	c.lastImport, c.lastSource = mark.ID, mark.Source
	fmt.Fprintf(c.out, "  importing %s as the list of %s (import %s); nothing is kept before you say yes\n", file, mark.Source, mark.ID)
	if done, err := c.importRead(ctx); err != nil || !done {
		return err
	}
	review, err := c.gw.ImportReview(ctx, c.sc, mark.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.out, "  %s\n", gateway.ImportSummary(review.Mark))
	c.printImportReview(review)
	return nil
}

// printImportReview lists the facts of an import that wait for the
// user's review, each with the source's words and the stored value that
// keeping it replaces.
func (c *chatSession) printImportReview(r gateway.ImportReview) {
	if len(r.Pending) == 0 {
		return
	}
	fmt.Fprintf(c.out, "  imported from %s, waiting for your review (/keep all or /discard all; /keep KEY or /discard KEY for one):\n", r.Mark.Source)
	for _, p := range r.Pending {
		fmt.Fprintf(c.out, "    %s\n", c.pendingLine(p))
		if v, ok := r.Replaces[p.Key]; ok {
			fmt.Fprintf(c.out, "      Keep replaces %s = %s\n", p.Key, v)
		}
	}
}

// importAll runs /keep all or /discard all on the last import of the
// session, and says what it kept or discarded, or that nothing waited.
func (c *chatSession) importAll(ctx context.Context, cmd string) error {
	what := strings.TrimPrefix(cmd, "/")
	if c.lastImport == "" {
		fmt.Fprintf(c.out, "nothing to %s: no import in this session (/import FILE [SOURCE])\n", what)
		return nil
	}
	if cmd == "/discard" {
		n, err := c.gw.DiscardImport(ctx, c.sc, c.lastImport)
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintf(c.out, "nothing to discard: nothing imported from %s waits\n", c.lastSource)
			return nil
		}
		fmt.Fprintf(c.out, "discarded %s imported from %s: importing the same list again does not propose them\n", factCount(n), c.lastSource)
		return nil
	}
	before, err := c.store.GetFacts(ctx, c.sc)
	if err != nil {
		return err
	}
	kept, err := c.gw.KeepImport(ctx, c.sc, c.lastImport)
	if err != nil {
		return err
	}
	if len(kept) == 0 {
		fmt.Fprintf(c.out, "nothing to keep: nothing imported from %s waits\n", c.lastSource)
		return nil
	}
	fmt.Fprintf(c.out, "kept %s imported from %s; they are in the prompt from the next answer on:\n", factCount(len(kept)), c.lastSource)
	for _, f := range kept {
		replaced := ""
		if i := slices.IndexFunc(before, func(s memory.Fact) bool { return s.Key == f.Key }); i >= 0 {
			replaced = ", replacing " + f.Key + " = " + before[i].Value
		}
		fmt.Fprintf(c.out, "  kept %s = %s%s\n", f.Key, f.Value, replaced)
	}
	page, err := c.store.GetFactsAndPending(ctx, c.sc)
	if err != nil {
		return err
	}
	if left := len(memory.ImportPending(page.Pending, c.lastImport)); left > 0 {
		fmt.Fprintf(c.out, "%s still waiting: your memory is full, and /keep all never drops what you have; /forget some facts, or /keep KEY to replace the one updated longest ago\n", factCount(left))
	}
	return nil
}

// factCount says "1 fact", "2 facts".
func factCount(n int) string {
	if n == 1 {
		return "1 fact"
	}
	return fmt.Sprintf("%d facts", n)
}
