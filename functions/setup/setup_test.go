package setup_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/setup"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestModelSettings(t *testing.T) {
	s, err := setup.FromEnv(env(map[string]string{setup.EnvTableName: "t", setup.EnvCheapModelID: "eu.amazon.nova-micro-v1:0"}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.AllowedModelIDs, []string{"eu.amazon.nova-micro-v1:0"}) || s.ModelAttemptTimeout != setup.DefaultModelAttemptSecs*time.Second {
		t.Errorf("defaults: allowed %q, attempt timeout %v; want the cheap model alone and %ds", s.AllowedModelIDs, s.ModelAttemptTimeout, setup.DefaultModelAttemptSecs)
	}
	s, err = setup.FromEnv(env(map[string]string{setup.EnvTableName: "t", setup.EnvCheapModelID: "m1",
		setup.EnvAllowedModelIDs: " m2, m1 ,,m3", setup.EnvModelAttemptSecs: "7"}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.AllowedModelIDs, []string{"m1", "m2", "m3"}) || s.ModelAttemptTimeout != 7*time.Second {
		t.Errorf("allowed %q, attempt timeout %v; want [m1 m2 m3] and 7s", s.AllowedModelIDs, s.ModelAttemptTimeout)
	}
	for _, bad := range []string{"0", "301", "x", "-1"} {
		_, err := setup.FromEnv(env(map[string]string{setup.EnvTableName: "t", setup.EnvModelAttemptSecs: bad}))
		if err == nil || !strings.Contains(err.Error(), setup.EnvModelAttemptSecs) {
			t.Errorf("%s=%s: error %v, want one naming the variable", setup.EnvModelAttemptSecs, bad, err)
		}
	}
}
