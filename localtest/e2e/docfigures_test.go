package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/docblock"
)

// TestLocaltestDocDescribesTheSuite holds what docs/localtest.md says of
// the stack this suite starts to the suite's own options.
func TestLocaltestDocDescribesTheSuite(t *testing.T) {
	docblock.CheckFigures(t, filepath.Join("..", "..", "docs", "localtest.md"), docblock.Figures{
		"`TestMain` \\(with a ([0-9]+) s visibility timeout": int(stackOptions.VisibilityTimeout / time.Second),
	})
}
