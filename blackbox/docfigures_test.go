package blackbox

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/docblock"
)

// TestReadmeSettingsDefaults holds the defaults docs/deploy.md gives for the
// suite's settings to the suite's own.
func TestReadmeSettingsDefaults(t *testing.T) {
	docblock.CheckFigures(t, filepath.Join("..", "docs", "deploy.md"), docblock.Figures{
		"`USERMEMORY_MODEL_DEADLINE` \\(default ([0-9]+)m,":                      int(deployedModelDeadline / time.Minute),
		"`USERMEMORY_MODEL_DEADLINE` \\(default [0-9]+m, ([0-9]+)m on the local": int(localModelDeadline / time.Minute),
		"`USERMEMORY_OTHER_TENANT` \\(default `([a-z-]+)`":                       defaultTenant,
		"`USERMEMORY_OTHER_TENANT` \\(default `[a-z-]+` and `([a-z-]+)`\\)":      defaultOtherTenant,
	})
}
