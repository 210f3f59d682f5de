package setup_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
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

func TestGlassBoxSettings(t *testing.T) {
	s, err := setup.FromEnv(env(map[string]string{setup.EnvTableName: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory.EvidenceCheckOff || !slices.Equal(s.Memory.PendingCategories, memory.Categories) ||
		s.Memory.PendingLifetime != 7*24*time.Hour {
		t.Errorf("defaults: evidence off %v, pending %q, lifetime %v; want on, every category, 7 days",
			s.Memory.EvidenceCheckOff, s.Memory.PendingCategories, s.Memory.PendingLifetime)
	}
	s, err = setup.FromEnv(env(map[string]string{setup.EnvTableName: "t", setup.EnvEvidenceCheck: "off",
		setup.EnvPendingCategories: " Health, religion,health", setup.EnvPendingDays: "30"}))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Memory.EvidenceCheckOff || !slices.Equal(s.Memory.PendingCategories, []string{"health", "religion"}) ||
		s.Memory.PendingLifetime != 30*24*time.Hour {
		t.Errorf("set: evidence off %v, pending %q, lifetime %v; want off, [health religion], 30 days",
			s.Memory.EvidenceCheckOff, s.Memory.PendingCategories, s.Memory.PendingLifetime)
	}
	s, err = setup.FromEnv(env(map[string]string{setup.EnvTableName: "t", setup.EnvPendingCategories: "none"}))
	if err != nil || s.Memory.PendingCategories == nil || len(s.Memory.PendingCategories) != 0 {
		t.Errorf("none: pending %#v, %v; want an empty, non-nil list", s.Memory.PendingCategories, err)
	}
	for name, bad := range map[string][]string{
		setup.EnvEvidenceCheck:     {"yes", "maybe"},
		setup.EnvPendingCategories: {"health,hobbies", ",", "everything"},
		setup.EnvPendingDays:       {"0", "31", "x"},
	} {
		for _, v := range bad {
			_, err := setup.FromEnv(env(map[string]string{setup.EnvTableName: "t", name: v}))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: error %v, want one naming the variable", name, v, err)
			}
		}
	}
}
