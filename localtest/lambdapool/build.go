package lambdapool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RIEPackage is the Go package of the Runtime Interface Emulator's
// command, pinned by a tool line in go.mod.
const RIEPackage = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"

// Build builds the Go main package pkg (a path such as ./functions/getfacts,
// relative to dir) into the bootstrap binary out, for this machine, as the
// template's build does for Lambda: tag lambda.norpc, stripped.
func Build(ctx context.Context, dir, pkg, out string) error {
	return goBuild(ctx, dir, out, "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", pkg)
}

// BuildRIE builds the Runtime Interface Emulator at the version go.mod
// pins into out.
func BuildRIE(ctx context.Context, dir, out string) error {
	return goBuild(ctx, dir, out, RIEPackage)
}

func goBuild(ctx context.Context, dir, out string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", out}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("lambdapool: go build %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return nil
}
