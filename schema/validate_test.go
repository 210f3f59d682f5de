package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/usermemory/usermemory/schema"
	"github.com/usermemory/usermemory/schema/schematest"
)

// validBody is a message with every member, to mutate.
const validBody = `{"version":1,"tenantId":"acme","userId":"u-123","threadId":"th-9",
	"previousTurnCount":0,"turnCount":2,
	"turns":[{"role":"user","text":"Hi"},{"role":"assistant","text":"Olá"}],
	"sentAt":"2026-11-29T22:00:00Z","cheapModelId":"us.amazon.nova-micro-v1:0",
	"meta":{"requestId":"r-1","traceId":"Root=1-a;Sampled=1"}}`

func reference(t testing.TB) *jsonschema.Schema {
	t.Helper()
	sch, err := schematest.CompileExtractionMessageV1()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// eventBodies returns the body of every record of the extractor's sample
// events, events/extractor-*.json.
func eventBodies(t testing.TB) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "events", "extractor-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no extractor events (%v)", err)
	}
	out := map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Records []struct {
				Body string `json:"body"`
			}
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, r := range ev.Records {
			out[filepath.Base(f)+"#"+string(rune('0'+i))] = r.Body
		}
	}
	return out
}

// edits are literal replacements in validBody, for what a mutation of the
// decoded value cannot write: number spellings, escapes, names in another
// case, bytes that are not UTF-8, trailing data.
var edits = [][2]string{
	{`"version":1`, `"version":1.0`}, {`"version":1`, `"version":1e0`}, {`"version":1`, `"version":10e-1`},
	{`"version":1`, `"version":"1"`}, {`"version":1`, `"version":1.0000000000000000001`}, {`"version":1`, `"version":1e999999999`},
	{`"turnCount":2`, `"turnCount":2.0`}, {`"turnCount":2`, `"turnCount":2e0`}, {`"turnCount":2`, `"turnCount":-0`},
	{`"turnCount":2`, `"turnCount":2147483647`}, {`"turnCount":2`, `"turnCount":2147483648`}, {`"turnCount":2`, `"turnCount":2147483647.0`},
	{`"turnCount":2`, `"turnCount":21474836470e-1`}, {`"turnCount":2`, `"turnCount":1e400`}, {`"turnCount":2`, `"turnCount":-1.5`},
	{`"turnCount":2`, `"turnCount":1e-400`}, {`"turnCount":2`, `"turnCount":0.5e1`},
	{`"acme"`, `"ac\u0023me"`}, {`"acme"`, `"acme\n"`}, {`"acme"`, `"acm\u00e9"`}, {`"acme"`, "\"acm\xff\""}, {`"acme"`, `"a\/b"`},
	{`"acme"`, `"` + strings.Repeat("a", 128) + `"`}, {`"acme"`, `"` + strings.Repeat("a", 129) + `"`},
	{`"r-1"`, `""`}, {`"r-1"`, `"r 1"`}, {`"r-1"`, `"` + strings.Repeat("~", 256) + `"`}, {`"r-1"`, `"` + strings.Repeat("~", 257) + `"`},
	{`"us.amazon.nova-micro-v1:0"`, `""`}, {`"us.amazon.nova-micro-v1:0"`, `"arn:aws:bedrock:us-east-1::foundation-model/x+y"`},
	{`"us.amazon.nova-micro-v1:0"`, `"` + strings.Repeat("m", 257) + `"`}, {`"us.amazon.nova-micro-v1:0"`, `"a|b"`},
	{`"tenantId"`, `"TenantId"`}, {`"role":"user"`, `"Role":"user"`}, {`"requestId"`, `"RequestId"`},
	{`"previousTurnCount":0,"turnCount":2,`, ``}, {`"previousTurnCount":0,"turnCount":2,`, `"turnCount":null,`},
	{`"previousTurnCount":0,"turnCount":2,`, `"previousTurnCount":-1,`}, {`"previousTurnCount":0,"turnCount":2,`, `"turnCount":2.0,`},
	{`"role":"user"`, `"role":"USER"`}, {`"role":"user"`, `"role":"tool"`}, {`"role":"user"`, `"role":"system"`},
	{`"version":1,`, `"version":1,"version":1,`}, {`"tenantId":"acme",`, `"tenantId":"a#b","tenantId":"acme",`},
	{`"tenantId":"acme",`, `"tenantId":"acme","tenantId":"a#b",`},
	{`"meta":{"requestId":"r-1","traceId":"Root=1-a;Sampled=1"}`, `"meta":{}`},
	{`"turns":[{"role":"user","text":"Hi"},{"role":"assistant","text":"Olá"}]`, `"turns":[]`},
	{`}}`, `}} `}, {`}}`, `}}}`}, {`}}`, `}} {}`}, {`}}`, `}}x`}, {`{"version"`, ` {"version"`}, {`{"version"`, "\ufeff{\"version\""},
	{`{"version"`, `[{"version"`}, {`"text":"Hi"`, `"text":"\ud800"`}, {`"text":"Hi"`, "\"text\":\"\x00\""},
}

// dateTimes are values of sentAt around the edges of the library's
// date-time check.
var dateTimes = []string{
	"2026-11-29T22:00:00Z", "2026-11-29t22:00:00z", "2026-11-29T22:00:00.5Z", "2026-11-29T22:00:00.123456789123Z",
	"2026-11-29T22:00:00+01:00", "2026-11-29T22:00:00-23:59", "2026-11-29T22:00:00+24:00", "2026-11-29T22:00:00+23:60",
	"2026-11-29T22:00:00+0100", "2026-11-29T22:00:00+01:0", "2026-11-29T22:00:00 01:00", "2026-11-29T22:00:00",
	"2026-11-29T22:00", "2026-11-29 22:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T23:60:00Z", "2026-11-29T23:59:61Z",
	"2026-12-31T23:59:60Z", "2026-12-31T22:59:60-01:00", "2026-12-31T23:59:60+00:01", "2027-01-01T00:58:60+00:59",
	"2026-12-31T23:59:60.999Z", "2026-12-31T12:00:60Z", "2026-02-29T00:00:00Z", "2028-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
	"2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
	"26-11-29T22:00:00Z", "2026-1-29T22:00:00Z", "2026-11-29T+1:+2:+3Z", "2026-11-29T-0:00:00Z", "2026-11-29T22:00:00++1:00",
	"2026-11-29T22:00:00+-0:00", "2026-11-29T22:00:00.Z", "2026-11-29T22:00:00.5", "2026-11-29T22:00:00.5x", "2026-11-29T22:00:00,5Z",
	"2026-11-29T2:00:00Z", "2026-11-29T22:0:00Z", "2026-11-29T22:00:0Z", "2026-11-29T22::0:00Z", "2026-11-29T22:00:00.٣Z",
	"２026-11-29T22:00:00Z", "2026-11-29T22:00:00.5+01:00", "2026-11-29T23:59:60-23:59", "2026-11-29T00:00:60+23:59",
	"2026-11-29T22:00:00Zjunk", "2026-11-29T22:00:00+01:00junk", "", "yesterday",
}

// mutate returns validBody with the member at path (slash-separated, an
// index for an array) set to value, or removed when value is remove.
func mutate(t testing.TB, path string, value any) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(validBody), &doc); err != nil {
		t.Fatal(err)
	}
	toks := strings.Split(path, "/")
	parent := doc
	for _, tok := range toks[:len(toks)-1] {
		switch p := parent.(type) {
		case map[string]any:
			parent = p[tok]
		case []any:
			parent = p[tok[0]-'0']
		}
	}
	last := toks[len(toks)-1]
	switch p := parent.(type) {
	case map[string]any:
		if value == remove {
			delete(p, last)
		} else {
			p[last] = value
		}
	case []any:
		p[last[0]-'0'] = value
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type removal struct{}

var remove any = removal{}

// values are what a mutation puts in place of a member.
var values = []any{remove, nil, true, 0, -1, 1, 2, 2.5, "", "x", "a#b", "a/b", "user", "Hi there", strings.Repeat("i", 129),
	"2026-11-29T22:00:00Z", []any{}, []any{"x"}, []any{map[string]any{"role": "user", "text": "t"}},
	map[string]any{}, map[string]any{"role": "user"}, map[string]any{"role": "user", "text": "t", "x": 1},
	map[string]any{"requestId": "r", "extra": "x"}}

var paths = []string{"version", "tenantId", "userId", "threadId", "previousTurnCount", "turnCount", "turns", "contextTurns", "sentAt",
	"cheapModelId", "meta", "unknown", "turns/0", "turns/1/role", "turns/1/text", "turns/1/extra", "meta/requestId",
	"meta/traceId", "meta/userName"}

// corpus returns the bodies the differential test runs, by name.
func corpus(t testing.TB) map[string]string {
	t.Helper()
	out := eventBodies(t)
	out["valid"] = validBody
	for i, e := range edits {
		if !strings.Contains(validBody, e[0]) {
			t.Fatalf("validBody lacks %q", e[0])
		}
		out["edit "+string(rune('A'+i%26))+string(rune('a'+i/26))+" "+e[1]] = strings.Replace(validBody, e[0], e[1], 1)
	}
	for _, d := range dateTimes {
		out["sentAt "+d] = mutate(t, "sentAt", d)
	}
	for _, p := range paths {
		for _, v := range values {
			b, _ := json.Marshal(v)
			if v == remove {
				b = []byte("removed")
			}
			out["set "+p+" = "+string(b)] = mutate(t, p, v)
		}
	}
	many := make([]any, schema.MaxTurns+1)
	for i := range many {
		many[i] = map[string]any{"role": "tool", "text": ""}
	}
	out["turns over maxItems"] = mutate(t, "turns", many)
	out["turns at maxItems"] = mutate(t, "turns", many[1:])
	many[7] = map[string]any{"role": "bot"}
	out["turns over maxItems with a bad one"] = mutate(t, "turns", many)
	out["contextTurns over maxItems with a bad one"] = mutate(t, "contextTurns", many)
	out["contextTurns at maxItems"] = mutate(t, "contextTurns", many[len(many)-schema.MaxTurns+1:])
	out["contextTurns"] = mutate(t, "contextTurns", []any{map[string]any{"role": "user", "text": "Olá"},
		map[string]any{"role": "assistant", "text": "Shall I keep answering in Portuguese?"}, map[string]any{"role": "tool", "text": ""}})
	for _, bad := range []any{nil, "t", map[string]any{"role": "bot", "text": "t"}, map[string]any{"role": "user"},
		map[string]any{"role": "user", "text": nil}, map[string]any{"role": "user", "text": "t", "x": 1}} {
		b, _ := json.Marshal(bad)
		out["contextTurns item "+string(b)] = mutate(t, "contextTurns", []any{map[string]any{"role": "user", "text": "ok"}, bad})
	}
	out["not JSON"] = `{"version"`
	out["empty"] = ``
	out["null"] = `null`
	out["array"] = `[]`
	out["every rule broken"] = `{"version":2,"tenantId":"a#","userId":7,"threadId":"","previousTurnCount":-1,"turnCount":0.5,` +
		`"turns":[{"role":"x"},"t",{"role":"user","text":1,"y":2}],"sentAt":"now","cheapModelId":"a b","meta":{"traceId":" ","z":1},"extra":1}`
	return out
}

// same runs the library and the decoder on body. The decoder never
// accepts what the library refuses; where it refuses what the library
// accepts, every reason must be one of the named ways in which it is
// stricter (see stricter); a message both accept decodes as encoding/json
// decodes it.
func same(t testing.TB, sch *jsonschema.Schema, body []byte) {
	t.Helper()
	want := schematest.Check(sch, body)
	libOK := want.JSON && len(want.Violations) == 0
	got, err := schema.DecodeExtractionMessageV1(body)
	var inv *schema.InvalidError
	if err != nil && !errors.As(err, &inv) {
		t.Fatalf("error %T %v, want an *InvalidError", err, err)
	}
	if inv != nil && !inv.NotJSON && len(inv.Violations) == 0 {
		t.Fatalf("an *InvalidError without violations")
	}
	switch {
	case !libOK && err == nil:
		t.Fatalf("the decoder accepts a message the library refuses (%q)", want.Violations)
	case !libOK:
		sameViolations(t, body, want.Violations, inv)
		return
	case inv != nil && inv.NotJSON:
		t.Fatalf("the library reads a valid message; the decoder says it is not JSON")
	case err != nil:
		for _, v := range inv.Violations {
			if why := stricter(body, v); why == "" {
				t.Fatalf("the decoder refuses at %v a message the library accepts, for no named reason", v)
			}
		}
		return
	}
	var ref schema.ExtractionMessage
	if err := json.Unmarshal(body, &ref); err != nil {
		t.Fatalf("encoding/json cannot read an accepted message: %v", err)
	}
	if !ref.SentAt.Equal(got.SentAt) || got.SentAt.Location() != time.UTC {
		t.Fatalf("sentAt = %v, want %v in UTC", got.SentAt, ref.SentAt)
	}
	ref.SentAt = got.SentAt
	if !reflect.DeepEqual(got, ref) {
		t.Fatalf("message =\n%+v\nwant (encoding/json)\n%+v", got, ref)
	}
}

// sameViolations holds the places and rules the decoder reports for a body
// the library refuses to the library's: each one the decoder reports is
// one the library reports, or one of the named ways it is stricter; and
// when the body is JSON to both, each one the library reports is one the
// decoder reports.
func sameViolations(t testing.TB, body []byte, lib []string, inv *schema.InvalidError) {
	t.Helper()
	if inv == nil || inv.NotJSON {
		return
	}
	got := map[string]bool{}
	for _, v := range inv.Violations {
		got[v.String()] = true
		switch {
		case slices.Contains(lib, v.String()):
		case stricter(body, v) != "":
			got[v.Pointer] = true // The library may say another rule there.
		default:
			t.Fatalf("the decoder reports %v, the library %q", v, lib)
		}
	}
	if len(inv.Violations) == 1 && slices.Contains([]string{"duplicate", "utf8", "range"}, inv.Violations[0].Keyword) {
		return // Not JSON as the decoder reads it: nothing checked further.
	}
	for _, v := range lib {
		at := strings.TrimSuffix(v[:strings.LastIndex(v, " (")], "/")
		kw := strings.TrimSuffix(v[strings.LastIndex(v, " (")+2:], ")")
		if stricter(body, schema.Violation{Pointer: at, Keyword: kw}) != "" {
			continue // A number the check reads as a float: the decode into Go refuses it.
		}
		if !got[v] && !got[at] {
			t.Fatalf("the library reports %s, the decoder %v", v, inv.Violations)
		}
	}
}

// stricter names the way in which v, a violation the decoder reports, is
// stricter than the schema as the library reads it, from what body holds;
// "" when it is none of them. The ways: a member twice (the library keeps
// the last), bytes or escapes that are not UTF-8 (the library replaces
// them), turnCount below previousTurnCount (no JSON Schema rule compares
// two members), a count written with a fraction or an exponent (2.0, 1e2:
// integers to the library), and a sentAt that Go's RFC 3339 reading
// refuses (a leap second, a lower-case "t" or "z").
func stricter(body []byte, v schema.Violation) string {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	_ = dec.Decode(&doc)
	switch {
	case v.Keyword == "duplicate":
		return "a repeated member"
	case v.Keyword == "range" && regexp.MustCompile(`[eE][+]?[0-9]{3,}`).Match(body):
		return "a number beyond a 64-bit float's range (the library reads any)"
	case v.Keyword == "utf8" && (!utf8.Valid(body) || bytes.Contains(body, []byte(`\ud8`)) || bytes.Contains(body, []byte(`\udc`))):
		return "not UTF-8"
	case v.Keyword == "order" && v.Pointer == "/turnCount":
		p, _ := doc["previousTurnCount"].(json.Number).Int64()
		c, _ := doc["turnCount"].(json.Number).Int64()
		if c < p {
			return "turnCount below previousTurnCount"
		}
	case v.Keyword == "type" && (v.Pointer == "/version" || v.Pointer == "/turnCount" || v.Pointer == "/previousTurnCount"):
		if n, ok := doc[v.Pointer[1:]].(json.Number); ok && strings.ContainsAny(string(n), ".eE") {
			return "an integer written with a fraction or exponent"
		}
	case v.Keyword == "format" && v.Pointer == "/sentAt":
		s, _ := doc["sentAt"].(string)
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "a date-time Go's RFC 3339 reading refuses"
		}
	}
	return ""
}

// TestDecodeAgreesWithTheLibrary holds the decoder to the schema as the
// library reads it, on the events' bodies, valid and invalid samples, and
// mutations of every member.
func TestDecodeAgreesWithTheLibrary(t *testing.T) {
	sch := reference(t)
	valid, invalid, stricterCount := 0, 0, 0
	for name, body := range corpus(t) {
		t.Run(name, func(t *testing.T) {
			same(t, sch, []byte(body))
		})
		v := schematest.Check(sch, []byte(body))
		switch _, err := schema.DecodeExtractionMessageV1([]byte(body)); {
		case v.JSON && len(v.Violations) == 0 && err != nil:
			stricterCount++
		case v.JSON && len(v.Violations) == 0:
			valid++
		default:
			invalid++
		}
	}
	if valid < 20 || invalid < 100 || stricterCount < 5 {
		t.Errorf("corpus of %d valid, %d invalid and %d refused by the stricter rules; want at least 20, 100 and 5", valid, invalid, stricterCount)
	}
}

// FuzzDecodeExtractionMessageV1 runs the same differential check on any
// body; its seeds, the corpus of TestDecodeAgreesWithTheLibrary, run under
// a plain go test.
func FuzzDecodeExtractionMessageV1(f *testing.F) {
	for _, body := range corpus(f) {
		if len(body) < 64<<10 {
			f.Add([]byte(body))
		}
	}
	sch := reference(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		same(t, sch, body)
	})
}

// TestDateTimes pins what sentAt accepts: RFC 3339 as Go's time package
// reads it, so that "2026-11-29T+1:+2:+3Z" and a leap second are refused,
// and an offset is read as the same instant in UTC.
func TestDateTimes(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time // zero: refused
	}{
		{"2026-11-29T22:00:00Z", time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)},
		{"2026-11-29T22:00:00+01:00", time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)},
		{"2026-11-29T22:00:00.123456789Z", time.Date(2026, 11, 29, 22, 0, 0, 123456789, time.UTC)},
		{"2026-11-29T+1:+2:+3Z", time.Time{}},
		{"2026-11-29t22:00:00z", time.Time{}},
		{"2026-12-31T23:59:60Z", time.Time{}},
		{"2026-11-29T22:00:00+24:00", time.Time{}},
		{"2026-04-31T00:00:00Z", time.Time{}},
		{"2026-11-29T22:00:00", time.Time{}},
		{"yesterday", time.Time{}},
	}
	for _, tt := range tests {
		m, err := schema.DecodeExtractionMessageV1([]byte(mutate(t, "sentAt", tt.in)))
		if (err == nil) == tt.want.IsZero() {
			t.Errorf("%s: error %v, want accepted %v", tt.in, err, !tt.want.IsZero())
			continue
		}
		if err == nil && (!m.SentAt.Equal(tt.want) || m.SentAt.Location() != time.UTC) {
			t.Errorf("%s: sentAt = %v, want %v", tt.in, m.SentAt, tt.want)
		}
	}
}

// TestErrorsNameNoValue checks that an error names places and rules, never
// the values nor the names of unknown members.
func TestErrorsNameNoValue(t *testing.T) {
	bodies := map[string]string{
		"unknown member":   strings.Replace(validBody, `"version":1`, `"version":1,"Ana lives in Lisbon":true`, 1),
		"repeated unknown": strings.Replace(validBody, `"version":1`, `"version":1,"Ana":1,"Ana":2`, 1),
		"bad values":       strings.NewReplacer(`"acme"`, `"Ana#Lisbon"`, `"role":"user"`, `"role":"Ana says hi"`).Replace(validBody),
		"bad sentAt":       strings.Replace(validBody, `"2026-11-29T22:00:00Z"`, `"Ana 2026"`, 1),
		"bad type":         strings.Replace(validBody, `"turnCount":2`, `"turnCount":"Ana"`, 1),
	}
	for name, body := range bodies {
		_, err := schema.DecodeExtractionMessageV1([]byte(body))
		var inv *schema.InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("%s: error = %v, want an *InvalidError", name, err)
			continue
		}
		if strings.Contains(err.Error(), "Ana") || strings.Contains(inv.Explain(), "Ana") {
			t.Errorf("%s: error %q (%s) holds content of the body", name, err, inv.Explain())
		}
	}
	_, err := schema.DecodeExtractionMessageV1([]byte(strings.NewReplacer(`"acme"`, `"Ana#Lisbon"`, `"role":"user"`, `"role":"Ana says hi"`).Replace(validBody)))
	if want := "schema: not the schema at /tenantId (pattern), /turns/0/role (enum)"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	_, err = schema.DecodeExtractionMessageV1([]byte(`{"version":2,"tenantId":"a#","userId":"","threadId":"/","previousTurnCount":3,"turnCount":1,"turns":[{"role":"x","text":""}],"sentAt":"2026-11-29T22:00:00Z","cheapModelId":"a b"}`))
	var inv *schema.InvalidError
	if !errors.As(err, &inv) || !strings.HasSuffix(err.Error(), ", and 1 more") || len(inv.Violations) != 6 {
		t.Errorf("error = %v, want the first 5 of 6 violations and 1 more", err)
	}
	if _, err := schema.DecodeExtractionMessageV1([]byte(`{"version":`)); !errors.As(err, &inv) || !inv.NotJSON || err.Error() != "schema: not JSON" {
		t.Errorf("error = %v, want not JSON", err)
	}
}

// TestValidate checks the rules on a message built in Go, as a producer
// builds it, including those no JSON body can break (invalid UTF-8 in a Go
// string).
func TestValidate(t *testing.T) {
	ok := schema.ExtractionMessage{Version: 1, TenantID: "acme", UserID: "u-1", ThreadID: "th-1", TurnCount: 2,
		Turns: []schema.Turn{{Role: "user", Text: "Hi"}}, SentAt: time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid message: %v", err)
	}
	sch := reference(t)
	tests := []struct {
		name string
		edit func(*schema.ExtractionMessage)
		want string
	}{
		{"version", func(m *schema.ExtractionMessage) { m.Version = 2 }, "/version (const)"},
		{"tenant", func(m *schema.ExtractionMessage) { m.TenantID = "a/b" }, "/tenantId (pattern)"},
		{"user", func(m *schema.ExtractionMessage) { m.UserID = strings.Repeat("u", 129) }, "/userId (pattern)"},
		{"thread", func(m *schema.ExtractionMessage) { m.ThreadID = "" }, "/threadId (pattern)"},
		{"negative", func(m *schema.ExtractionMessage) { m.PreviousTurnCount = -1 }, "/previousTurnCount (minimum)"},
		{"order", func(m *schema.ExtractionMessage) { m.PreviousTurnCount = 3 }, "/turnCount (order)"},
		{"too many turns", func(m *schema.ExtractionMessage) { m.Turns = make([]schema.Turn, schema.MaxTurns+1) }, "/turns (maxItems)"},
		{"role", func(m *schema.ExtractionMessage) { m.Turns[0].Role = "system" }, "/turns/0/role (enum)"},
		{"utf8", func(m *schema.ExtractionMessage) { m.Turns[0].Text = "\xff" }, "/turns/0/text (utf8)"},
		{"too many context turns", func(m *schema.ExtractionMessage) { m.ContextTurns = make([]schema.Turn, schema.MaxTurns+1) }, "/contextTurns (maxItems)"},
		{"context role", func(m *schema.ExtractionMessage) { m.ContextTurns = []schema.Turn{{Role: "user"}, {Role: "x"}} }, "/contextTurns/1/role (enum)"},
		{"context utf8", func(m *schema.ExtractionMessage) { m.ContextTurns = []schema.Turn{{Role: "user", Text: "\xff"}} }, "/contextTurns/0/text (utf8)"},
		{"sentAt", func(m *schema.ExtractionMessage) { m.SentAt = time.Time{} }, "/sentAt (format)"},
		{"model", func(m *schema.ExtractionMessage) { m.CheapModelID = "a b" }, "/cheapModelId (pattern)"},
		{"title", func(m *schema.ExtractionMessage) { m.ThreadTitle = strings.Repeat("ç", schema.MaxThreadTitleChars+1) }, "/threadTitle (maxLength)"},
		{"title utf8", func(m *schema.ExtractionMessage) { m.ThreadTitle = "\xff" }, "/threadTitle (utf8)"},
		{"meta", func(m *schema.ExtractionMessage) { m.Meta = &schema.Meta{TraceID: "a b"} }, "/meta/traceId (pattern)"},
		{"uncounted with a count", func(m *schema.ExtractionMessage) { m.Uncounted = true }, "/ (uncounted)"},
		{"uncounted with a previous count", func(m *schema.ExtractionMessage) { m.Uncounted, m.TurnCount, m.PreviousTurnCount = true, 0, 1 }, "/ (uncounted)"},
	}
	for _, tt := range tests {
		m := ok
		m.Turns = slices.Clone(ok.Turns)
		tt.edit(&m)
		err := m.Validate()
		var inv *schema.InvalidError
		if !errors.As(err, &inv) || !slices.ContainsFunc(inv.Violations, func(v schema.Violation) bool { return v.String() == tt.want }) {
			t.Errorf("%s: Validate() = %v, want a violation %s", tt.name, err, tt.want)
		}
		validateAgrees(t, sch, m)
	}
}

// TestValidateAgreesWithTheLibrary holds Validate, on messages built in
// Go, to the library: every body of the differential corpus that
// encoding/json, a lenient reader, reads into an ExtractionMessage.
func TestValidateAgreesWithTheLibrary(t *testing.T) {
	sch := reference(t)
	n := 0
	for name, body := range corpus(t) {
		var m schema.ExtractionMessage
		if json.Unmarshal([]byte(body), &m) != nil {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) { validateAgrees(t, sch, m) })
	}
	if n < 100 {
		t.Errorf("%d messages, want at least 100", n)
	}
}

// validateAgrees checks that m.Validate reports the places and rules the
// library reports of m as go-json-experiment writes it (nil turns as []),
// besides the rules of a Go value that JSON cannot break: a sentAt left
// unset (written as year 1) or that JSON cannot hold, turnCount below
// previousTurnCount, text that is not UTF-8 (written with U+FFFD).
func validateAgrees(t *testing.T, sch *jsonschema.Schema, m schema.ExtractionMessage) {
	t.Helper()
	body, err := jsonv2.Marshal(m, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "/sentAt (format)") {
			t.Errorf("Validate() = %v for a sentAt JSON cannot hold", err)
		}
		return
	}
	lib := schematest.Check(sch, body).Violations
	var got []string
	var inv *schema.InvalidError
	if err := m.Validate(); errors.As(err, &inv) {
		for _, v := range inv.Violations {
			goOnly := v.Keyword == "utf8" || v.Keyword == "order" || v.Keyword == "uncounted" || v.Keyword == "format" && m.SentAt.IsZero()
			if !goOnly && !slices.Contains(got, v.String()) {
				got = append(got, v.String())
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, lib) && !(len(got) == 0 && len(lib) == 0) {
		t.Errorf("Validate() reports %q, the library %q", got, lib)
	}
}

// benchBody is a message of 20 turns of 500 bytes each.
func benchBody(b testing.TB) []byte {
	b.Helper()
	turns := make([]any, 20)
	for i := range turns {
		turns[i] = map[string]any{"role": []string{"user", "assistant"}[i%2], "text": strings.Repeat("Olá, I live in Lisbon. ", 22)}
	}
	return []byte(mutate(b, "turns", turns))
}

// BenchmarkDecodeExtractionMessageV1 is the extractor's decode now.
func BenchmarkDecodeExtractionMessageV1(b *testing.B) {
	body := benchBody(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := schema.DecodeExtractionMessageV1(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLibraryThenDecode is the extractor's decode before: the library
// reads and validates the body, then encoding/json decodes it again.
func BenchmarkLibraryThenDecode(b *testing.B) {
	body := benchBody(b)
	sch := reference(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			b.Fatal(err)
		}
		var m schema.ExtractionMessage
		if err := json.Unmarshal(body, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeAllocations checks the reason the decode does not run the
// library (docs/decisions.md, "Libraries not taken"): per message, the
// library then a decode makes more allocations than this package's
// decode alone.
func TestDecodeAllocations(t *testing.T) {
	body := benchBody(t)
	sch := reference(t)
	library := testing.AllocsPerRun(20, func() {
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		_ = sch.Validate(v)
		var m schema.ExtractionMessage
		_ = json.Unmarshal(body, &m)
	})
	decode := testing.AllocsPerRun(20, func() { _, _ = schema.DecodeExtractionMessageV1(body) })
	t.Logf("the library then a decode: %.0f allocations; this package's decode: %.0f", library, decode)
	if decode >= library {
		t.Errorf("this package's decode makes %.0f allocations, the library then a decode %.0f: the reason not to run the library is gone", decode, library)
	}
}

// TestContextTurnsAreOptional checks that contextTurns is read when
// present and that a message without it is the version 1 message as
// before: written without the member, read with none.
func TestContextTurnsAreOptional(t *testing.T) {
	m, err := schema.DecodeExtractionMessageV1([]byte(mutate(t, "contextTurns", []any{map[string]any{"role": "assistant", "text": "Shall I?"}})))
	if err != nil || len(m.ContextTurns) != 1 || m.ContextTurns[0] != (schema.Turn{Role: "assistant", Text: "Shall I?"}) {
		t.Errorf("with contextTurns: %+v, %v", m.ContextTurns, err)
	}
	m, err = schema.DecodeExtractionMessageV1([]byte(validBody))
	if err != nil || m.ContextTurns != nil {
		t.Fatalf("without contextTurns: %+v, %v", m.ContextTurns, err)
	}
	b, err := json.Marshal(m)
	if err != nil || strings.Contains(string(b), "contextTurns") {
		t.Errorf("a message without context turns is written %s, %v", b, err)
	}
}
