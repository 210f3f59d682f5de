package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadSamconfig reads both forms of parameter_overrides sam accepts,
// and the stack name and Region.
func TestReadSamconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(dir, "samconfig.toml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`version = 0.1
[default.global.parameters]
stack_name = "um"
[default.deploy.parameters]
region = "eu-west-1"
parameter_overrides = ["AlarmEmail=ops@acme.test", "CorsAllowOrigins=https://a.test,https://b.test"]
`)
	s, err := readSamconfig(dir)
	want := map[string]string{"AlarmEmail": "ops@acme.test", "CorsAllowOrigins": "https://a.test,https://b.test"}
	if err != nil || s.StackName != "um" || s.Region != "eu-west-1" || !reflect.DeepEqual(s.Parameters, want) {
		t.Errorf("list form: %+v, %v; want um, eu-west-1, %v", s, err, want)
	}
	write(`[default.deploy.parameters]
stack_name = "um2"
parameter_overrides = "AlarmEmail=ops@acme.test Description=\"two words\""
`)
	s, err = readSamconfig(dir)
	want = map[string]string{"AlarmEmail": "ops@acme.test", "Description": "two words"}
	if err != nil || s.StackName != "um2" || !reflect.DeepEqual(s.Parameters, want) {
		t.Errorf("string form: %+v, %v; want um2, %v", s, err, want)
	}
	if got := overridesArg(want); got != `AlarmEmail=ops@acme.test Description="two words"` {
		t.Errorf("overridesArg: %s", got)
	}
	if _, err := parseOverrides("A=1 oops"); err == nil {
		t.Error("a word that is not NAME=VALUE: no error")
	}
	if s, err := readSamconfig(t.TempDir()); err != nil || len(s.Parameters) != 0 {
		t.Errorf("no samconfig.toml: %+v, %v; want no settings and no error", s, err)
	}
}

// TestPlaceholders: an example value blocks in the issuer or audience and
// warns elsewhere.
func TestPlaceholders(t *testing.T) {
	for _, tt := range []struct {
		params map[string]string
		want   Status
	}{
		{map[string]string{"JwtIssuer": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_EXAMPLE"}, Block},
		{map[string]string{"JwtAudience": "https://api.example.com"}, Block},
		{map[string]string{"CorsAllowOrigins": "https://app.example.com"}, Warn},
		{map[string]string{"CorsAllowOrigins": "https://app.acme.test", "JwtIssuer": ""}, Pass},
	} {
		if got := placeholders(tt.params); got.Status != tt.want || (got.Status != Pass && got.Fix == "") {
			t.Errorf("%v: %v, want %v with a fix", tt.params, got, tt.want)
		}
	}
}
