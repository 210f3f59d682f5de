package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetupReportNamesWhatItFound runs scripts/setup-report.sh, which make
// setup runs, with a PATH holding a moto_server (whose Python says its
// moto version) and no cfn-lint: it names moto_server with its path and
// version, and says cfn-lint is missing and what brings it. The script
// shares this folder's subject: what a machine has and lacks for the
// tests.
func TestSetupReportNamesWhatItFound(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash, which make and the scripts need: %v", err)
	}
	bin := t.TempDir()
	python := filepath.Join(bin, "python-fake")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(python, "#!/bin/sh\necho 'moto 9.9.9'\n")
	write(filepath.Join(bin, "moto_server"), "#!"+python+"\n")
	cmd := exec.Command(bash, filepath.Join("..", "setup-report.sh"), filepath.Join(t.TempDir(), "venv"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", "USERMEMORY_MOTO_SERVER=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("setup-report.sh: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"  moto_server  " + filepath.Join(bin, "moto_server") + " (moto 9.9.9)\n",
		"  cfn-lint     MISSING: make setup installs it\n",
	} {
		if _, lacks := exec.LookPath("/usr/bin/cfn-lint"); strings.Contains(want, "cfn-lint") && lacks == nil {
			continue // this machine has cfn-lint where the test's PATH looks
		}
		if !strings.Contains(got, want) {
			t.Errorf("report:\n%s\nwant the line %q", got, want)
		}
	}
}
