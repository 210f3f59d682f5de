package main

import (
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
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

// TestLinksNeitherSchemaLibraryNorProducer holds the bootstrap size down:
// the function checks messages with package schema's own validator,
// without the JSON Schema library (and the rest of golang.org/x/text,
// which it brings: the core's evidence check needs Unicode normalization
// alone, unicode/norm and the transform package under it), and reads the
// message type from package schema, without package producer. It links
// the SQS client only to send the idle read's delayed copies (idle.go).
func TestLinksNeitherSchemaLibraryNorProducer(t *testing.T) {
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
			"github.com/usermemory/usermemory/producer",
		} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("the extractor links %s", dep)
			}
		}
	}
}

// setElsewhere are the members of memory.ExtractRequest that
// extractRequest leaves to others: SentAt, which the handler takes from
// the queue's attribute (sentAt), and the members of Meta the core sets
// itself (memory.Store.Extract: the kind, the scope, the thread, the
// model). notCopied are the members of the message the request has no
// place for: the version, read by the decoder, and sentAt, read by
// sentAt.
var (
	setElsewhere = []string{"SentAt", "Meta.Kind", "Meta.TenantID", "Meta.UserID", "Meta.ThreadID", "Meta.ModelID"}
	notCopied    = []string{"Version", "SentAt"}
)

// TestExtractRequestCopiesEveryMember fills every member of a message with
// a value of its own, through reflection, and checks that extractRequest
// carries each into the member of the request of the same name, and that
// each member of the request comes from the message: a member added to
// one type and not to the copy fails here.
func TestExtractRequestCopiesEveryMember(t *testing.T) {
	var m schema.ExtractionMessage
	n := 0
	fill(reflect.ValueOf(&m).Elem(), &n)
	want := leaves(reflect.ValueOf(m), "", notCopied)
	got := leaves(reflect.ValueOf(extractRequest(m)), "", setElsewhere)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the request holds %q, the message %q", got, want)
	}
	if len(want) < 12 {
		t.Errorf("the message has %d values, want every member filled", len(want))
	}
}

// fill sets every string and integer under v to a value of its own
// (counting in *n), gives every slice two items and every pointer a value.
func fill(v reflect.Value, n *int) {
	switch v.Kind() {
	case reflect.String:
		*n++
		v.SetString("v" + strconv.Itoa(*n))
	case reflect.Int:
		*n++
		v.SetInt(int64(*n))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(int64(*n), 0)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	}
}

// leaves returns the strings and integers under v as path=value, but for
// the members at the paths in skip. A path is the field names joined by
// dots, with slice indices and embedded structs left out, so that a
// member of the message and the member of the request it goes to have
// the same path (TenantID, Turns.Text, Meta.TraceID).
func leaves(v reflect.Value, path string, skip []string) []string {
	if slices.Contains(skip, path) {
		return nil
	}
	var out []string
	switch v.Kind() {
	case reflect.String, reflect.Int:
		return []string{path + "=" + fmt.Sprint(v.Interface())}
	case reflect.Pointer:
		if !v.IsNil() {
			out = leaves(v.Elem(), path, skip)
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, leaves(v.Index(i), path, skip)...)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return []string{path + "=" + fmt.Sprint(v.Interface())}
		}
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if !v.Type().Field(i).Anonymous {
				name = strings.TrimPrefix(path+"."+name, ".")
			} else {
				name = path
			}
			out = append(out, leaves(v.Field(i), name, skip)...)
		}
	default:
		out = []string{v.Kind().String() + " at " + path}
	}
	return out
}
