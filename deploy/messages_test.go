package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestModelCallDeclinedIsNotAPass: a model call the user declined was
// not made, so its line warns that the check was not done, and never
// passes.
func TestModelCallDeclinedIsNotAPass(t *testing.T) {
	for _, answer := range []string{"n\n", "\n", ""} {
		var out bytes.Buffer
		p := &preflight{in: strings.NewReader(answer), out: &out} // no model: a call would panic
		r := p.callModel(context.Background(), "amazon.nova-micro-v1:0")
		if r.Status != Warn || !strings.Contains(r.Message, "not called") || !strings.Contains(r.Message, "not checked") {
			t.Errorf("answer %q: %v %q, want WARN saying the call was not made and the check not done", answer, r.Status, r.Message)
		}
	}
}
