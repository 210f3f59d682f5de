package functions_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/httpapitest"
)

// lambdaUnreserved is the concurrency Lambda keeps unreserved in an
// account (docs/scale.md, "Reserved concurrency", cites it).
const lambdaUnreserved = 100

// reservingParameter returns the parameter that sets the reserved
// concurrency of function id in tpl, "" for none.
func reservingParameter(tpl httpapitest.SAMTemplate, id string) string {
	var found string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["Ref"].(string); ok && asMap(tpl["Parameters"])[r] != nil {
				found = r
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(props(tpl.Resources()[id])["ReservedConcurrentExecutions"])
	return found
}

// TestReservationsBlock writes docs/scale.md's block of reserved
// concurrency: which functions each reservation parameter covers, counted
// from template.yaml, and the account quota the sized reservations need
// (Lambda keeps lambdaUnreserved unreserved). The template, evaluated with
// the sizes, must reserve exactly that; with its defaults, nothing.
func TestReservationsBlock(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	// The sizes the doc suggests: the default ReadRateLimit at 20 ms a
	// read, and a few edits at once on each editing function.
	sizes := map[string]int{
		"ReadReservedConcurrency": toInt(t, templateDefault(t, "ReadRateLimit")) * 20 / 1000,
		"EditReservedConcurrency": 5,
	}
	covered := map[string][]string{}
	for _, id := range tpl.Functions() {
		if p := reservingParameter(tpl, id); p != "" {
			covered[p] = append(covered[p], id)
		}
	}
	if !slices.Equal(slices.Sorted(maps.Keys(covered)), slices.Sorted(maps.Keys(sizes))) {
		t.Fatalf("the reservation parameters of the functions are %v, want %v", slices.Sorted(maps.Keys(covered)), slices.Sorted(maps.Keys(sizes)))
	}
	tmpl := loadStackTemplate(t)
	params := map[string]string{}
	for p, n := range sizes {
		params[p] = fmt.Sprint(n)
		if d := toInt(t, templateDefault(t, p)); d != 0 {
			t.Errorf("%s defaults to %d: a new account's quota may refuse any reservation, want 0", p, d)
		}
	}
	reserved := 0
	for _, f := range resolve(t, tmpl, deployment("us-east-1", params)).Functions {
		reserved += f.ReservedConcurrency
	}
	rows := []string{
		"| reservation | functions | each | reserved |",
		"|---|---|---:|---:|",
	}
	sum := 0
	for _, p := range []string{"ReadReservedConcurrency", "EditReservedConcurrency"} {
		ids := slices.Sorted(slices.Values(covered[p]))
		n := sizes[p] * len(ids)
		sum += n
		rows = append(rows, fmt.Sprintf("| `%s` %d | %d: %s | %d | %d |", p, sizes[p], len(ids), strings.Join(ids, ", "), sizes[p], n))
	}
	if sum != reserved {
		t.Errorf("template.yaml with %v reserves %d, the block counts %d", params, reserved, sum)
	}
	rows = append(rows,
		fmt.Sprintf("| kept unreserved by Lambda | | | %d |", lambdaUnreserved),
		fmt.Sprintf("| **account concurrency quota needed** | | | **%d** |", sum+lambdaUnreserved),
		"",
		"With the defaults (0 and 0) nothing is reserved and any quota deploys.")
	docblock.Check(t, filepath.Join(httpapitest.Root(t), "docs", "scale.md"), "reservations", strings.Join(rows, "\n"))
}
