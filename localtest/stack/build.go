package stack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/localtest/lambdapool"
)

// packageDir returns the folder of a function's main package, relative to
// root: its CodeUri when that holds a main package (SAM's go1.x build), or
// else, for a makefile build from the repository (CodeUri "."), the folder
// functions/NAME under CodeUri, NAME being the logical ID in lower case
// without its "Function" suffix (GetFactsFunction: functions/getfacts).
func packageDir(root, templateDir string, f *samtemplate.Function) (string, error) {
	code := filepath.Join(templateDir, f.CodeDir)
	name := strings.ToLower(strings.TrimSuffix(f.LogicalID, "Function"))
	for _, dir := range []string{code, filepath.Join(code, "functions", name), filepath.Join(code, name)} {
		if isMain(dir) {
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				return "", err
			}
			return "./" + filepath.ToSlash(rel), nil
		}
	}
	return "", fmt.Errorf("stack: function %s: no main package in %s or %s", f.LogicalID, code, filepath.Join(code, "functions", name))
}

var packageMain = regexp.MustCompile(`(?m)^package main\b`)

func isMain(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err == nil && packageMain.Match(b) {
			return true
		}
	}
	return false
}

// build builds every function's bootstrap for this machine in one go
// build, and the Runtime Interface Emulator once per version, both into
// cache, where the binaries stay between runs so that go build relinks
// only what changed. Each function's bootstrap in state is a copy, so that
// a later build never rewrites a binary that a running stack executes; a
// lock on the cache keeps two stacks from building at once. It returns
// the bootstraps by logical ID and the emulator's path.
func build(ctx context.Context, root, templateDir, cache, state string, fns map[string]*samtemplate.Function, progress func(string, ...any)) (map[string]string, string, error) {
	rie := filepath.Join(cache, "aws-lambda-rie-"+rieVersion(root))
	rieErr := make(chan error, 1)
	go func() {
		if _, err := os.Stat(rie); err == nil {
			rieErr <- nil
			return
		}
		progress("building the Lambda Runtime Interface Emulator (once per version; with the functions, about a minute on two cores with an empty Go cache)…")
		tmp := fmt.Sprintf("%s.%d.tmp", rie, os.Getpid())
		if err := lambdapool.BuildRIE(ctx, root, tmp); err != nil {
			rieErr <- err
			return
		}
		rieErr <- os.Rename(tmp, rie)
	}()

	sum := sha256.Sum256([]byte(root))
	out := filepath.Join(cache, "functions-"+hex.EncodeToString(sum[:6])) + string(filepath.Separator)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, "", err
	}
	pkgs := map[string]string{}
	var args []string
	for _, id := range slices.Sorted(maps.Keys(fns)) {
		dir, err := packageDir(root, templateDir, fns[id])
		if err != nil {
			return nil, "", err
		}
		pkgs[id] = dir
		args = append(args, dir)
	}
	unlock, err := lock(strings.TrimSuffix(out, string(filepath.Separator)) + ".lock")
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	progress("building %d functions for this machine in one go build: %s…", len(args), strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", out}, args...)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("stack: building the functions: %w\n%s", err, b)
	}
	bootstraps := map[string]string{}
	for id, dir := range pkgs {
		target := filepath.Join(state, "functions", id, "bootstrap")
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, "", err
		}
		if err := copyFile(filepath.Join(out, filepath.Base(dir)), target); err != nil {
			return nil, "", err
		}
		bootstraps[id] = target
	}
	select {
	case err := <-rieErr:
		if err != nil {
			return nil, "", err
		}
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	return bootstraps, rie, nil
}

// rieVersion returns the emulator's version that go.mod pins, so that a
// new pin builds a new binary.
func rieVersion(root string) string {
	b, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	m := regexp.MustCompile(`github.com/aws/aws-lambda-runtime-interface-emulator (\S+)`).FindSubmatch(b)
	if m == nil {
		return "unknown"
	}
	return string(m[1])
}

// lock takes an exclusive lock on the file at path, waiting for it.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("stack: lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// copyFile copies an executable to dst, replacing it (by rename, so that
// a process running the old one is not disturbed).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
