package setup

import (
	"golang.org/x/text/unicode/norm"

	"github.com/usermemory/usermemory/memory"
)

// StoreOptions are the options every store of the service is built with,
// besides its model, gate and clock: the evidence check compares a quote
// with the user's turns in Unicode NFKC form (memory.WithNormalizer), so
// that a quote the model wrote in another normal form, or with
// compatibility characters folded, is still found. The core links no
// normalisation library; this is where it is chosen.
func StoreOptions() []memory.Option {
	return []memory.Option{memory.WithNormalizer(norm.NFKC.String)}
}
