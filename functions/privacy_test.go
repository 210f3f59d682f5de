package functions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// TestPrivacyMapIsTheTemplates holds docs/privacy.md to template.yaml:
// every window it states as `name` = value is the template's default (or
// the evaluated resource's value, or the core's constant), every window
// is stated, and the days within which an erased user's data is gone
// from every copy are the longer of the backups' and the messages' lives.
func TestPrivacyMapIsTheTemplates(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	params := asMap(tpl["Parameters"])
	want := map[string]string{
		"ExtractionQueue.MessageRetentionPeriod": app.Queues["ExtractionQueue"].Attributes["MessageRetentionPeriod"],
		setup.EnvFenceDays:                       app.Functions["EraseUserFunction"].Env[setup.EnvFenceDays],
		"DeletionFenceLifetime":                  strconv.Itoa(int(memory.DeletionFenceLifetime / (24 * time.Hour))),
	}
	for _, p := range []string{"PointInTimeRecoveryDays", "DeadLetterRetentionSeconds", "LogRetentionDays", "PendingDays"} {
		want[p] = fmt.Sprint(asMap(params[p])["Default"])
	}
	raw, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "privacy.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile("`([A-Za-z_.]+)` = ([0-9]+)").FindAllStringSubmatch(doc, -1) {
		w, ok := want[m[1]]
		switch {
		case !ok:
			t.Errorf("docs/privacy.md states %s = %s, a window this test does not know", m[1], m[2])
		case m[2] != w:
			t.Errorf("docs/privacy.md states %s = %s; the template says %s", m[1], m[2], w)
		}
		seen[m[1]] = true
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("docs/privacy.md does not state %s", name)
		}
	}
	env := app.Functions["EraseUserFunction"].Env
	r, err := setup.RetentionFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	gone := max(r.Backups, r.MessageLife())
	days := int((gone + 24*time.Hour - 1) / (24 * time.Hour))
	if m := regexp.MustCompile(`within\s+(\d+)\s+days of\s+the erasure`).FindStringSubmatch(doc); m == nil || m[1] != strconv.Itoa(days) {
		t.Errorf("docs/privacy.md: %q; an erased user's data is gone from every copy within %d days (backups %v, messages %v)", m, days, r.Backups, r.MessageLife())
	}
}
