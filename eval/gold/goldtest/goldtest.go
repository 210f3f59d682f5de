// Package goldtest holds what the tests of the gold set and of the eval
// command both compute from a conversation, so that they compute it once.
package goldtest

import (
	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/memory"
)

// DueCounts returns the turn counts at which store finds a message of c
// due for an extraction, in order: one a due message, as a gateway sends
// c's calls one after the other.
func DueCounts(store *memory.Store, c gold.Conversation) []int {
	var due []int
	count := 0
	for _, call := range c.Calls() {
		prev := count
		count += len(call)
		if store.IsExtractDue(prev, count) {
			due = append(due, count)
		}
	}
	return due
}
