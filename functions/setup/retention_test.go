package setup

import (
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

func TestRetentionFromEnv(t *testing.T) {
	env := map[string]string{EnvBackupRetentionDays: "14", EnvQueueRetentionSeconds: "345600", EnvDeadLetterRetentionSeconds: "604800"}
	getenv := func(k string) string { return env[k] }
	got, err := RetentionFromEnv(getenv)
	day := 24 * time.Hour
	if want := (memory.Retention{Backups: 14 * day, Queue: 4 * day, DeadLetterQueue: 7 * day}); err != nil || got != want {
		t.Errorf("RetentionFromEnv = %+v, %v; want %+v", got, err, want)
	}
	for name, bad := range map[string]string{EnvBackupRetentionDays: "36", EnvQueueRetentionSeconds: "", EnvDeadLetterRetentionSeconds: "1209601"} {
		old := env[name]
		env[name] = bad
		if _, err := RetentionFromEnv(getenv); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %v, want one naming it", name, bad, err)
		}
		env[name] = old
	}
}
