package schema_test

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/usermemory/usermemory/schema"
	"github.com/usermemory/usermemory/schema/schematest"
)

func TestExtractionMessageV1(t *testing.T) {
	sch, err := schematest.CompileExtractionMessageV1()
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	const valid = `{"version":1,"tenantId":"acme","userId":"u-123","threadId":"th-9",
		"previousTurnCount":0,"turnCount":2,
		"turns":[{"role":"user","text":"Hi"},{"role":"assistant","text":"Olá"}],
		"sentAt":"2026-11-29T22:00:00Z","cheapModelId":"us.amazon.nova-micro-v1:0",
		"meta":{"requestId":"r-1","traceId":"Root=1-a;Sampled=1"}}`
	tests := []struct {
		name    string
		replace [2]string
		ok      bool
	}{
		{"valid", [2]string{"", ""}, true},
		{"version 2", [2]string{`"version":1`, `"version":2`}, false},
		{"tenant with slash", [2]string{`"acme"`, `"acme/x"`}, false},
		{"user with hash", [2]string{`"u-123"`, `"u#123"`}, false},
		{"negative count", [2]string{`"previousTurnCount":0`, `"previousTurnCount":-1`}, false},
		{"fractional count", [2]string{`"turnCount":2`, `"turnCount":2.5`}, false},
		{"unknown role", [2]string{`"role":"user"`, `"role":"system"`}, false},
		{"sentAt not a date", [2]string{`"2026-11-29T22:00:00Z"`, `"yesterday"`}, false},
		{"unknown member", [2]string{`"version":1`, `"version":1,"extra":true`}, false},
		{"unknown meta member", [2]string{`"r-1"`, `"r-1","userName":"x"`}, false},
		{"model ID with space", [2]string{`nova-micro`, `nova micro`}, false},
		{"turns missing", [2]string{`"turns":[{"role":"user","text":"Hi"},{"role":"assistant","text":"Olá"}],`, ``}, false},
		{"a thread title", [2]string{`"threadId":"th-9"`, `"threadId":"th-9","threadTitle":"Trip to Porto 🚆"`}, true},
		{"a thread title at the limit", [2]string{`"threadId":"th-9"`, `"threadId":"th-9","threadTitle":"` + strings.Repeat("ç", schema.MaxThreadTitleChars) + `"`}, true},
		{"a thread title over the limit", [2]string{`"threadId":"th-9"`, `"threadId":"th-9","threadTitle":"` + strings.Repeat("ç", schema.MaxThreadTitleChars+1) + `"`}, false},
		{"an empty thread title", [2]string{`"threadId":"th-9"`, `"threadId":"th-9","threadTitle":""`}, false},
		{"a thread title not a string", [2]string{`"threadId":"th-9"`, `"threadId":"th-9","threadTitle":7`}, false},
		{"no optional members", [2]string{`,"cheapModelId":"us.amazon.nova-micro-v1:0",
		"meta":{"requestId":"r-1","traceId":"Root=1-a;Sampled=1"}`, ``}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := valid
			if tt.replace[0] != "" {
				if !strings.Contains(doc, tt.replace[0]) {
					t.Fatalf("sample lacks %q", tt.replace[0])
				}
				doc = strings.Replace(doc, tt.replace[0], tt.replace[1], 1)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
			if err != nil {
				t.Fatalf("sample is not JSON: %v", err)
			}
			err = sch.Validate(v)
			if (err == nil) != tt.ok {
				t.Errorf("Validate = %v, want ok %v", err, tt.ok)
			}
			if _, err := schema.DecodeExtractionMessageV1([]byte(doc)); (err == nil) != tt.ok {
				t.Errorf("DecodeExtractionMessageV1 = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestExtractionMessageV1ReturnsACopy(t *testing.T) {
	a := schema.ExtractionMessageV1()
	a[0] = 'x'
	if b := schema.ExtractionMessageV1(); b[0] == 'x' {
		t.Errorf("ExtractionMessageV1 shares its bytes with callers")
	}
}
