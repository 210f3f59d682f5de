package functions_test

import (
	"fmt"
	"testing"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/httpapitest"
)

// TestErasureKnowsTheRetention checks that the windows the erasure
// function answers with (setup.RetentionFromEnv) are the stack's own: the
// table's point-in-time recovery period and both queues' retention, with
// the defaults and with other values of the parameters, and that the
// template's bounds of the parameters are those the function accepts.
func TestErasureKnowsTheRetention(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	tmpl := loadStackTemplate(t)
	for _, params := range []map[string]string{nil,
		{"PointInTimeRecoveryDays": "1", "DeadLetterRetentionSeconds": "86400"},
		{"PointInTimeRecoveryDays": "35", "DeadLetterRetentionSeconds": "1209600"}} {
		app := resolve(t, tmpl, deployment("us-east-1", params))
		env := app.Functions["EraseUserFunction"].Env
		r, err := setup.RetentionFromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%v: the erasure function refuses its environment: %v", params, err)
		}
		pitr := get(app.Properties["Table"], "PointInTimeRecoverySpecification")
		if get(asMap(pitr), "PointInTimeRecoveryEnabled") != true || fmt.Sprint(int64(r.Backups.Hours()/24)) != fmt.Sprint(get(asMap(pitr), "RecoveryPeriodInDays")) {
			t.Errorf("%v: backups %v, table's point-in-time recovery %v", params, r.Backups, pitr)
		}
		if q := app.Queues["ExtractionQueue"].Attributes["MessageRetentionPeriod"]; fmt.Sprint(int64(r.Queue.Seconds())) != q {
			t.Errorf("%v: queue retention %v, the queue's %s s", params, r.Queue, q)
		}
		if q := app.Queues["ExtractionDeadLetterQueue"].Attributes["MessageRetentionPeriod"]; fmt.Sprint(int64(r.DeadLetterQueue.Seconds())) != q {
			t.Errorf("%v: dead-letter retention %v, the queue's %s s", params, r.DeadLetterQueue, q)
		}
	}
	for name, bounds := range map[string][2]any{"PointInTimeRecoveryDays": {1, 35}, "DeadLetterRetentionSeconds": {86400, 1209600}} {
		p := asMap(asMap(tpl["Parameters"])[name])
		if fmt.Sprint(p["MinValue"]) != fmt.Sprint(bounds[0]) || fmt.Sprint(p["MaxValue"]) != fmt.Sprint(bounds[1]) {
			t.Errorf("%s: bounds %v to %v, want %v", name, p["MinValue"], p["MaxValue"], bounds)
		}
	}
}
