package main

import (
	"errors"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/schema"
)

func TestDecodeHoldsBodiesToTheSchema(t *testing.T) {
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(store)
	if err != nil {
		t.Fatal(err)
	}
	const valid = `{"version":1,"tenantId":"acme","userId":"u-123","threadId":"th-9","previousTurnCount":0,"turnCount":2,` +
		`"turns":[{"role":"user","text":"Hi"},{"role":"assistant","text":"Olá"}],"sentAt":"2026-11-29T22:00:00.5Z",` +
		`"cheapModelId":"us.amazon.nova-micro-v1:0","meta":{"requestId":"r-1","traceId":"t-1"}}`
	got, err := h.decode(valid)
	if err != nil {
		t.Fatalf("decode(valid) = %v", err)
	}
	want := schema.ExtractionMessage{Version: 1, TenantID: "acme", UserID: "u-123", ThreadID: "th-9", TurnCount: 2,
		Turns:        []schema.Turn{{Role: "user", Text: "Hi"}, {Role: "assistant", Text: "Olá"}},
		SentAt:       time.Date(2026, 11, 29, 22, 0, 0, 5e8, time.UTC),
		CheapModelID: "us.amazon.nova-micro-v1:0", Meta: &schema.Meta{RequestID: "r-1", TraceID: "t-1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decode(valid) =\n%+v\nwant\n%+v", got, want)
	}

	invalid := []struct {
		name, from, to string
		where          string // in the reason
	}{
		{"not JSON", `{"version"`, `{"version"]`, "not JSON"},
		{"version 2", `"version":1`, `"version":2`, "/version"},
		{"string count", `"turnCount":2`, `"turnCount":"2"`, "/turnCount"},
		{"counts backwards", `"previousTurnCount":0`, `"previousTurnCount":3`, "/turnCount (order)"},
		{"repeated member", `"version":1`, `"version":1,"version":1`, "/ (duplicate)"},
		{"not UTF-8", `"Hi"`, "\"H\xffi\"", "(utf8)"},
		{"tenant with hash", `"acme"`, `"ac#me"`, "/tenantId"},
		{"tool role typo", `"role":"assistant"`, `"role":"Assistant"`, "/turns/1/role"},
		{"unknown member, named by content", `"version":1`, `"version":1,"Ana lives in Lisbon":true`, "(additionalProperties)"},
		{"null turns", `"turns":[{"role":"user","text":"Hi"},{"role":"assistant","text":"Olá"}]`, `"turns":null`, "/turns"},
		{"bad date", `22:00:00.5Z`, `22:00`, "/sentAt (format)"},
		{"unknown meta member", `"traceId":"t-1"`, `"traceId":"t-1","Lisbon":1`, "/meta (additionalProperties)"},
		{"count too large", `"turnCount":2`, `"turnCount":2147483648`, "/turnCount (maximum)"},
		{"trailing data", `"t-1"}}`, `"t-1"}}}`, "not JSON"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(valid, tt.from) {
				t.Fatalf("sample lacks %q", tt.from)
			}
			_, err := h.decode(strings.Replace(valid, tt.from, tt.to, 1))
			var bad *errMalformed
			if !errors.As(err, &bad) {
				t.Fatalf("decode = %v, want a malformed message", err)
			}
			if !strings.Contains(bad.reason, tt.where) {
				t.Errorf("reason %q does not say %q", bad.reason, tt.where)
			}
			if strings.Contains(bad.reason, "Lisbon") || strings.Contains(bad.reason, "Assistant") || strings.Contains(bad.reason, "#") {
				t.Errorf("reason %q holds content of the body", bad.reason)
			}
		})
	}
	if _, err := h.decode(strings.Repeat(" ", DefaultMaxBodyBytes+1)); !errors.Is(err, errOversized) {
		t.Errorf("decode(oversized) = %v, want errOversized", err)
	}
}

// TestLinksNeitherSchemaLibraryNorSQS holds the bootstrap size down: the
// function checks messages with package schema's own validator, without
// the JSON Schema library (and the rest of golang.org/x/text, which it
// brings: the core's evidence check needs Unicode normalization alone,
// unicode/norm and the transform package under it), and reads the
// message type from package schema, without the SQS client that package
// producer links.
func TestLinksNeitherSchemaLibraryNorSQS(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/usermemory/usermemory/schema") {
		t.Fatalf("go list -deps does not list package schema: %q", deps)
	}
	allowed := []string{"golang.org/x/text/unicode/norm", "golang.org/x/text/transform"}
	for _, dep := range deps {
		if slices.Contains(allowed, dep) {
			continue
		}
		for _, banned := range []string{
			"github.com/santhosh-tekuri/jsonschema/v6",
			"golang.org/x/text",
			"github.com/aws/aws-sdk-go-v2/service/sqs",
			"github.com/usermemory/usermemory/producer",
		} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("the extractor links %s", dep)
			}
		}
	}
}
