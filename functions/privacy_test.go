package functions_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// TestPrivacyMapIsTheTemplates writes the block windows of
// docs/privacy.md from template.yaml: every window with its default (or
// the evaluated resource's value, or the core's constant) and its bounds,
// and the days within which an erased user's data is gone from every
// copy, the longer of the backups' and the messages' lives.
func TestPrivacyMapIsTheTemplates(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	params := asMap(tpl["Parameters"])
	param := func(name, key string) int { return toInt(t, asMap(params[name])[key]) }
	const day = 86400
	queue := toInt(t, app.Queues["ExtractionQueue"].Attributes["MessageRetentionPeriod"])
	dlq := param("DeadLetterRetentionSeconds", "Default")
	rows := []string{
		"| window | default | bounds | set by |",
		"|---|---|---|---|",
		fmt.Sprintf("| point-in-time recovery of the table | `PointInTimeRecoveryDays` = %d (days) | %d–%d | template parameter |",
			param("PointInTimeRecoveryDays", "Default"), param("PointInTimeRecoveryDays", "MinValue"), param("PointInTimeRecoveryDays", "MaxValue")),
		fmt.Sprintf("| the extraction queue's retention | `ExtractionQueue.MessageRetentionPeriod` = %d (s, %d days) | fixed | template.yaml |", queue, queue/day),
		fmt.Sprintf("| the dead-letter queue's retention | `DeadLetterRetentionSeconds` = %d (s, %d days) | %d–%d days | template parameter |",
			dlq, dlq/day, param("DeadLetterRetentionSeconds", "MinValue")/day, param("DeadLetterRetentionSeconds", "MaxValue")/day),
		fmt.Sprintf("| the erasure fence | `%s` = %s (days) | outlives both queues | template.yaml |", setup.EnvFenceDays, app.Functions["EraseUserFunction"].Env[setup.EnvFenceDays]),
		fmt.Sprintf("| a removal's tombstone | `memory.DeletionFenceLifetime` = %d (days) | the same | memory package |", int(memory.DeletionFenceLifetime/(24*time.Hour))),
		fmt.Sprintf("| the functions' logs | `LogRetentionDays` = %d (days) | CloudWatch's values | template parameter |", param("LogRetentionDays", "Default")),
		fmt.Sprintf("| a pending fact's wait | `PendingDays` = %d (days) | %d–%d | template parameter |",
			param("PendingDays", "Default"), param("PendingDays", "MinValue"), param("PendingDays", "MaxValue")),
	}
	env := app.Functions["EraseUserFunction"].Env
	r, err := setup.RetentionFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	days := func(d time.Duration) int { return int((d + 24*time.Hour - 1) / (24 * time.Hour)) }
	rows = append(rows, "", fmt.Sprintf("With these defaults, an erased user's data is gone from every copy within %d days of the erasure (backups %d days; queued messages %d + %d = %d days).",
		days(max(r.Backups, r.MessageLife())), days(r.Backups), queue/day, dlq/day, days(r.MessageLife())))
	docblock.Check(t, filepath.Join(httpapitest.Root(t), "docs", "privacy.md"), "windows", strings.Join(rows, "\n"))
}
