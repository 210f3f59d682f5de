package setup

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// Names of the environment variables of the erasure function that say how
// long copies of an erased user's data remain (template.yaml sets them
// from the table's and the queues' settings).
const (
	EnvBackupRetentionDays        = "BACKUP_RETENTION_DAYS"
	EnvQueueRetentionSeconds      = "QUEUE_RETENTION_SECONDS"
	EnvDeadLetterRetentionSeconds = "DEAD_LETTER_RETENTION_SECONDS"
)

// RetentionFromEnv reads the retention windows through getenv (os.Getenv
// in main). Each is required, a whole number: backups 1 to 35 days (the
// point-in-time recovery periods DynamoDB accepts), the queues 60 to
// 1,209,600 seconds (SQS's bounds). The error names the variable at fault.
func RetentionFromEnv(getenv func(string) string) (memory.Retention, error) {
	days, err := bounded(getenv, EnvBackupRetentionDays, 1, 35)
	if err != nil {
		return memory.Retention{}, err
	}
	queue, err := bounded(getenv, EnvQueueRetentionSeconds, 60, 1209600)
	if err != nil {
		return memory.Retention{}, err
	}
	dead, err := bounded(getenv, EnvDeadLetterRetentionSeconds, 60, 1209600)
	if err != nil {
		return memory.Retention{}, err
	}
	return memory.Retention{Backups: time.Duration(days) * 24 * time.Hour,
		Queue: time.Duration(queue) * time.Second, DeadLetterQueue: time.Duration(dead) * time.Second}, nil
}

// bounded reads the whole number of the variable name, from lo to hi.
func bounded(getenv func(string) string, name string, lo, hi int) (int, error) {
	raw := strings.TrimSpace(getenv(name))
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("setup: %s must be a whole number from %d to %d, not %q", name, lo, hi, raw)
	}
	return n, nil
}
