package schema_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
	"github.com/usermemory/usermemory/schema/schematest"
)

// validImport is an import message with every member.
const validImport = `{"version":1,"kind":"import","tenantId":"acme","userId":"u-123",
	"importId":"imp-1765000000000-abc","source":"ChatGPT",
	"text":"The user lives in Porto.\nPrefers tea.","sentAt":"2026-12-07T01:00:00Z",
	"cheapModelId":"us.amazon.nova-micro-v1:0","meta":{"requestId":"r-1","traceId":"Root=1-a;Sampled=1"}}`

// TestImportMessageV1 holds DecodeImportMessageV1 to the JSON Schema
// library on the same bodies: each accepts exactly what the other does.
func TestImportMessageV1(t *testing.T) {
	sch, err := schematest.CompileImportMessageV1()
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	tests := []struct {
		name    string
		replace [2]string
		ok      bool
	}{
		{"valid", [2]string{"", ""}, true},
		{"version 2", [2]string{`"version":1`, `"version":2`}, false},
		{"another kind", [2]string{`"kind":"import"`, `"kind":"extract"`}, false},
		{"no kind", [2]string{`"kind":"import",`, ``}, false},
		{"tenant with slash", [2]string{`"acme"`, `"acme/x"`}, false},
		{"import ID with hash", [2]string{`"imp-1765000000000-abc"`, `"imp#1"`}, false},
		{"no source", [2]string{`"source":"ChatGPT",`, ``}, false},
		{"an empty source", [2]string{`"ChatGPT"`, `""`}, false},
		{"a source at the limit", [2]string{`"ChatGPT"`, `"` + strings.Repeat("é", memory.MaxImportSourceChars) + `"`}, true},
		{"a source over the limit", [2]string{`"ChatGPT"`, `"` + strings.Repeat("é", memory.MaxImportSourceChars+1) + `"`}, false},
		{"an empty text", [2]string{`"The user lives in Porto.\nPrefers tea."`, `""`}, false},
		{"a text at the limit", [2]string{`"The user lives in Porto.\nPrefers tea."`, `"` + strings.Repeat("ç", memory.MaxImportChars) + `"`}, true},
		{"a text over the limit", [2]string{`"The user lives in Porto.\nPrefers tea."`, `"` + strings.Repeat("ç", memory.MaxImportChars+1) + `"`}, false},
		{"a text not a string", [2]string{`"The user lives in Porto.\nPrefers tea."`, `["a"]`}, false},
		{"sentAt not a date", [2]string{`"2026-12-07T01:00:00Z"`, `"yesterday"`}, false},
		{"unknown member", [2]string{`"version":1`, `"version":1,"turns":[]`}, false},
		{"unknown meta member", [2]string{`"r-1"`, `"r-1","userName":"x"`}, false},
		{"model ID with space", [2]string{`nova-micro`, `nova micro`}, false},
		{"no optional members", [2]string{`,
	"cheapModelId":"us.amazon.nova-micro-v1:0","meta":{"requestId":"r-1","traceId":"Root=1-a;Sampled=1"}`, ``}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := validImport
			if tt.replace[0] != "" {
				if !strings.Contains(doc, tt.replace[0]) {
					t.Fatalf("sample lacks %q", tt.replace[0])
				}
				doc = strings.Replace(doc, tt.replace[0], tt.replace[1], 1)
			}
			verdict := schematest.Check(sch, []byte(doc))
			if libOK := verdict.JSON && len(verdict.Violations) == 0; libOK != tt.ok {
				t.Errorf("the library: %+v, want ok %v", verdict, tt.ok)
			}
			_, err := schema.DecodeImportMessageV1([]byte(doc))
			if (err == nil) != tt.ok {
				t.Errorf("DecodeImportMessageV1 = %v, want ok %v", err, tt.ok)
			}
			var inv *schema.InvalidError
			if err != nil && !errors.As(err, &inv) {
				t.Errorf("DecodeImportMessageV1 error %T, want *schema.InvalidError", err)
			}
		})
	}
}

// TestImportMessageRoundTrip checks that a message the route builds is
// valid, and reads back as it was sent.
func TestImportMessageRoundTrip(t *testing.T) {
	m := schema.ImportMessage{Version: schema.ImportMessageVersion, Kind: schema.ImportKind, TenantID: "acme", UserID: "u-1",
		ImportID: "imp-1", Source: "Claude", Text: "Lives in Lisbon.", SentAt: time.Date(2026, 12, 7, 1, 0, 0, 0, time.FixedZone("x", 3600)),
		Meta: &schema.Meta{RequestID: "r-9"}}
	if err := m.Validate(); err != nil {
		t.Fatalf("Validate = %v, want nil", err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.IsImportMessage(body) {
		t.Errorf("IsImportMessage(%s) = false", body)
	}
	got, err := schema.DecodeImportMessageV1(body)
	if err != nil {
		t.Fatalf("DecodeImportMessageV1 = %v", err)
	}
	want := m
	want.SentAt = m.SentAt.UTC()
	if !reflect.DeepEqual(got, want) || got.SentAt.Location() != time.UTC {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

// TestImportMessageValidate checks the rules Validate holds a message to
// before it is sent, the schema's and those it cannot state.
func TestImportMessageValidate(t *testing.T) {
	ok := schema.ImportMessage{Version: 1, Kind: schema.ImportKind, TenantID: "acme", UserID: "u-1",
		ImportID: "imp-1", Source: "Gemini", Text: "x", SentAt: time.Unix(1765000000, 0)}
	tests := map[string]struct {
		edit    func(*schema.ImportMessage)
		pointer string
	}{
		"no sentAt":        {func(m *schema.ImportMessage) { m.SentAt = time.Time{} }, "/sentAt"},
		"no kind":          {func(m *schema.ImportMessage) { m.Kind = "" }, "/kind"},
		"version 2":        {func(m *schema.ImportMessage) { m.Version = 2 }, "/version"},
		"a bad user":       {func(m *schema.ImportMessage) { m.UserID = "a/b" }, "/userId"},
		"an empty text":    {func(m *schema.ImportMessage) { m.Text = "" }, "/text"},
		"a text not UTF-8": {func(m *schema.ImportMessage) { m.Text = "a\xffb" }, "/text"},
		"a long source":    {func(m *schema.ImportMessage) { m.Source = strings.Repeat("a", memory.MaxImportSourceChars+1) }, "/source"},
	}
	for name, tt := range tests {
		m := ok
		tt.edit(&m)
		err := m.Validate()
		var inv *schema.InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("%s: Validate = %v, want an *InvalidError", name, err)
			continue
		}
		if !slices.ContainsFunc(inv.Violations, func(v schema.Violation) bool { return v.Pointer == tt.pointer }) {
			t.Errorf("%s: violations %v, want one at %s", name, inv.Violations, tt.pointer)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate of a valid message = %v", err)
	}
}

// TestIsImportMessage checks that only an object of kind "import" is told
// an import: never an extraction message, nor a body that is not JSON.
func TestIsImportMessage(t *testing.T) {
	for body, want := range map[string]bool{
		validImport:          true,
		`{"kind":"import"}`:  true,
		`{"Kind":"import"}`:  false,
		`{"kind":"imports"}`: false,
		`{"kind":7}`:         false,
		`{"version":1,"tenantId":"a","userId":"u","threadId":"t","turns":[],"sentAt":"2026-12-07T01:00:00Z"}`: false,
		`["import"]`: false,
		`not json`:   false,
		``:           false,
	} {
		if got := schema.IsImportMessage([]byte(body)); got != want {
			t.Errorf("IsImportMessage(%.40q) = %v, want %v", body, got, want)
		}
	}
}

// TestImportDeduplicationID checks that the ID is a valid SQS
// deduplication ID, the same for the same import and different for
// another import, user or tenant.
func TestImportDeduplicationID(t *testing.T) {
	a := schema.ImportDeduplicationID("acme", "u-1", "imp-1")
	if len(a) != 64 || a != schema.ImportDeduplicationID("acme", "u-1", "imp-1") {
		t.Fatalf("ImportDeduplicationID = %q, want 64 stable hex characters", a)
	}
	for _, other := range []string{
		schema.ImportDeduplicationID("acme", "u-1", "imp-2"),
		schema.ImportDeduplicationID("acme", "u-2", "imp-1"),
		schema.ImportDeduplicationID("acmf", "u-1", "imp-1"),
		schema.ImportDeduplicationID("acme", "u-1imp-1", ""),
	} {
		if other == a {
			t.Errorf("two imports share the deduplication ID %s", a)
		}
	}
}

// TestImportGoTypeMatchesSchema holds ImportMessage to the schema: its
// JSON members are the schema's properties, the ones it always writes the
// schema's required ones, and the schema's lengths are the core's limits.
func TestImportGoTypeMatchesSchema(t *testing.T) {
	var top struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			MaxLength *int `json:"maxLength"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema.ImportMessageV1(), &top); err != nil {
		t.Fatal(err)
	}
	members := jsonMembers(reflect.TypeFor[schema.ImportMessage]())
	var required []string
	for name, always := range members {
		if _, ok := top.Properties[name]; !ok {
			t.Errorf("member %s is not a property of the schema", name)
		}
		if always {
			required = append(required, name)
		}
	}
	for name := range top.Properties {
		if _, ok := members[name]; !ok {
			t.Errorf("property %s is not a member of ImportMessage", name)
		}
	}
	slices.Sort(required)
	slices.Sort(top.Required)
	if !slices.Equal(required, top.Required) {
		t.Errorf("always written %v, schema requires %v", required, top.Required)
	}
	for name, want := range map[string]int{"source": memory.MaxImportSourceChars, "text": memory.MaxImportChars} {
		if got := top.Properties[name].MaxLength; got == nil || *got != want {
			t.Errorf("%s maxLength %v, want the core's %d", name, got, want)
		}
	}
}

// TestImportMessageV1ReturnsACopy checks that callers cannot change the
// embedded schema.
func TestImportMessageV1ReturnsACopy(t *testing.T) {
	a := schema.ImportMessageV1()
	a[0] = 'x'
	if b := schema.ImportMessageV1(); b[0] == 'x' {
		t.Errorf("ImportMessageV1 shares its bytes with callers")
	}
}
