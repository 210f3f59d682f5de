package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// strictLimit is the body limit of the strict handler: small, so that the
// fuzz targets reach it.
const strictLimit = 4096

// seeded is the user whose fact "k" = "kept" every strict test stores
// first: a refused request must leave it as it was.
var seeded = memory.Scope{TenantID: "acme", UserID: "u-1"}

// strictFixture is a handler over a real store on the in-memory
// repository, serving every route of the fact API, with one fact stored.
type strictFixture struct {
	h    *httpapi.Handler
	repo *memorytest.Repo
	// before is the seeded user's record before any request, and seeding
	// the number of write calls the seeding made.
	before  memory.Record
	seeding int
}

func newStrictFixture(t testing.TB) *strictFixture {
	t.Helper()
	repo := memorytest.NewRepo()
	store := httpapitest.NewStore(t, repo)
	if _, err := store.Put(context.Background(), seeded, memory.FactInput{Key: "k", Value: "kept"}); err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.RequestConfig{MaxBodyBytes: strictLimit}, nil, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		switch {
		case r.Value != "":
			f, err := store.Put(ctx, r.Scope, memory.FactInput{Key: r.Key, Value: r.Value})
			return http.StatusOK, httpapi.FactBody{Fact: httpapi.FactOf(f)}, err
		case r.Key != "":
			return http.StatusNoContent, nil, store.RemoveFact(ctx, r.Scope, r.Key)
		}
		m, err := store.GetFactsAndPending(ctx, r.Scope)
		return http.StatusOK, httpapi.NewFactsBody(store, m), err
	}, "GET /v1/me/facts", "PUT /v1/me/facts/{key}", "DELETE /v1/me/facts/{key}",
		"PUT /v1/users/{userId}/facts/{key}", "DELETE /v1/users/{userId}/facts/{key}")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := repo.Record(seeded)
	f := &strictFixture{h: h, repo: repo, before: before}
	f.seeding = f.writeCalls()
	return f
}

// writeMethods are the methods of memory.Repository that may write: all
// but Get.
var writeMethods = func() []string {
	typ := reflect.TypeFor[memory.Repository]()
	var out []string
	for i := range typ.NumMethod() {
		if name := typ.Method(i).Name; name != "Get" {
			out = append(out, name)
		}
	}
	return out
}()

// writeCalls returns how many calls of the fixture's repository may have
// written.
func (f *strictFixture) writeCalls() int {
	n := 0
	for _, m := range writeMethods {
		n += f.repo.Calls(m)
	}
	return n
}

// checkNothingWritten fails t when the repository had a write call, or
// the seeded user's record changed.
func (f *strictFixture) checkNothingWritten(t testing.TB, what string) {
	t.Helper()
	if n := f.writeCalls() - f.seeding; n != 0 {
		t.Errorf("%s: %d write calls reached the repository, want 0", what, n)
	}
	if after, _ := f.repo.Record(seeded); !reflect.DeepEqual(after, f.before) {
		t.Errorf("%s: the stored record changed:\n got %+v\nwant %+v", what, after, f.before)
	}
}

// handle serves ev, directly or, with viaJSON, through the Lambda
// runtime's JSON path as a deployed function gets it: invalid UTF-8 in the
// event's strings then arrives as U+FFFD.
func (f *strictFixture) handle(t testing.TB, ev events.APIGatewayV2HTTPRequest, viaJSON bool) (events.APIGatewayV2HTTPResponse, int64) {
	t.Helper()
	var resp events.APIGatewayV2HTTPResponse
	if viaJSON {
		resp = httpapitest.Invoke(t, f.h.Handle, httpapitest.Marshal(t, ev))
	} else {
		var err error
		if resp, err = f.h.Handle(context.Background(), ev); err != nil {
			t.Fatalf("Handle: %v", err)
		}
	}
	var p httpapi.Problem
	if resp.StatusCode >= 400 {
		if resp.Headers["content-type"] != httpapi.ProblemContentType || json.Unmarshal([]byte(resp.Body), &p) != nil || p.Code == 0 {
			t.Fatalf("a %d that is not a problem with a code: %v %s", resp.StatusCode, resp.Headers, resp.Body)
		}
	}
	return resp, p.Code
}

func putEvent(tok *httpapitest.Token, key, body string, b64 bool) events.APIGatewayV2HTTPRequest {
	ev := httpapitest.NewEvent("PUT /v1/me/facts/{key}", tok, map[string]string{"key": key}, "x")
	ev.Body, ev.IsBase64Encoded = body, b64
	if b64 {
		ev.Body = base64.StdEncoding.EncodeToString([]byte(body))
	}
	return ev
}

func userTok() *httpapitest.Token {
	return &httpapitest.Token{Sub: seeded.UserID, Tenant: seeded.TenantID, Scope: "memory/user"}
}

// TestStrictBody: a body a decoder would read only by rewriting it is
// refused with its own code, and nothing is written; what is plain
// JSON text is stored exactly.
func TestStrictBody(t *testing.T) {
	tests := []struct {
		name, body string
		b64        bool
		status     int
		code       int64
		stored     string // the value stored under "k" on a 200
	}{
		{"invalid UTF-8 in the value", "{\"value\":\"\xff\xfe\"}", false, 400, httpapi.CodeInvalidUTF8, ""},
		{"invalid UTF-8, base64-encoded body", "{\"value\":\"\xff\xfe\"}", true, 400, httpapi.CodeInvalidUTF8, ""},
		{"invalid UTF-8 in a member name", "{\"value\":\"x\",\"\xc0\":1}", false, 400, httpapi.CodeInvalidUTF8, ""},
		{"truncated UTF-8 sequence", "{\"value\":\"Lisbo\xc3\"}", true, 400, httpapi.CodeInvalidUTF8, ""},
		{"lone high surrogate", `{"value":"\ud800"}`, false, 400, httpapi.CodeInvalidUTF8, ""},
		{"lone low surrogate", `{"value":"x\udc00"}`, false, 400, httpapi.CodeInvalidUTF8, ""},
		{"high surrogate then a letter", `{"value":"\ud800\u0041"}`, false, 400, httpapi.CodeInvalidUTF8, ""},
		{"reversed pair", `{"value":"\ude00\ud83d"}`, false, 400, httpapi.CodeInvalidUTF8, ""},
		{"duplicate value", `{"value":"first","value":"second"}`, false, 400, httpapi.CodeDuplicateMember, ""},
		{"duplicate after unescaping", `{"value":"first","\u0076alue":"second"}`, false, 400, httpapi.CodeDuplicateMember, ""},
		{"duplicate in a nested object", `{"value":"x","meta":{"a":1,"a":2}}`, false, 400, httpapi.CodeDuplicateMember, ""},
		{"duplicate in an array's object", `[{"a":1,"b":[{"c":1,"c":1}]}]`, false, 400, httpapi.CodeDuplicateMember, ""},
		{"same name in two objects", `{"value":"x","list":[{"a":1},{"a":2}]}`, false, 400, httpapi.CodeUnknownField, ""},
		{"two objects", `{"value":"x"} {"value":"y"}`, false, 400, httpapi.CodeMalformedBody, ""},
		{"trailing data", `{"value":"x"}garbage`, false, 400, httpapi.CodeMalformedBody, ""},
		{"an array", `["value"]`, false, 400, httpapi.CodeMalformedBody, ""},
		{"a string", `"value"`, false, 400, httpapi.CodeMalformedBody, ""},
		{"null", `null`, false, 400, httpapi.CodeMalformedBody, ""},
		{"a number value", `{"value":1}`, false, 400, httpapi.CodeMalformedBody, ""},
		{"an unknown member", `{"value":"x","note":"y"}`, false, 400, httpapi.CodeUnknownField, ""},
		{"a user in the body", `{"value":"x","userId":"u-2"}`, false, 400, httpapi.CodeIdentityInBody, ""},
		{"white space around", " \n{\"value\":\"Lisbon\"}\r\n", false, 200, 0, "Lisbon"},
		{"a surrogate pair", `{"value":"\ud83d\ude00 ok"}`, false, 200, 0, "😀 ok"},
		{"an escaped backslash before u", `{"value":"a\\ud800"}`, false, 200, 0, `a\ud800`},
		{"U+FFFD as text", `{"value":"� is a character"}`, false, 200, 0, "� is a character"},
		{"base64 of a valid body", `{"value":"Porto"}`, true, 200, 0, "Porto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newStrictFixture(t)
			resp, code := f.handle(t, putEvent(userTok(), "k", tt.body, tt.b64), false)
			if resp.StatusCode != tt.status || code != tt.code {
				t.Fatalf("PUT %q → %d %s, want %d with code %d", tt.body, resp.StatusCode, resp.Body, tt.status, tt.code)
			}
			if tt.status >= 400 {
				f.checkNothingWritten(t, tt.name)
				return
			}
			rec, _ := f.repo.Record(seeded)
			for _, fact := range rec.Facts {
				if fact.Key == "k" && fact.Value != tt.stored {
					t.Errorf("stored %q, want %q", fact.Value, tt.stored)
				}
			}
		})
	}
}

// TestStrictDuplicateDetail: the refusal of a duplicate member names the
// member, as unescaped, at any depth.
func TestStrictDuplicateDetail(t *testing.T) {
	for body, name := range map[string]string{
		`{"value":"a","\u0076alue":"b"}`:            `"value"`,
		`{"value":"x","meta":{"a":1,"a":2}}`:        `"a"`,
		`{"value":"x","m":[{"b":1},{"c":1,"c":2}]}`: `"c"`,
	} {
		f := newStrictFixture(t)
		resp, code := f.handle(t, putEvent(userTok(), "k", body, false), false)
		var p httpapi.Problem
		if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
			t.Fatal(err)
		}
		if code != httpapi.CodeDuplicateMember || !strings.Contains(p.Detail, "member "+name+" twice") {
			t.Errorf("PUT %s → %d %q, want code %d naming %s", body, code, p.Detail, httpapi.CodeDuplicateMember, name)
		}
	}
}

// TestStrictKey: a path key that is not text once decoded, as API
// Gateway passes it or as it arrives through the event's JSON, is refused
// and does not touch the fact "k" it used to be stored as.
func TestStrictKey(t *testing.T) {
	for _, key := range []string{"k\xff\xfe", "k\xff", "\xc3", "k\ufffd\ufffd", "\ufffd", "k\ufffd"} {
		for _, viaJSON := range []bool{false, true} {
			for _, route := range []string{"PUT /v1/me/facts/{key}", "DELETE /v1/me/facts/{key}", "PUT /v1/users/{userId}/facts/{key}"} {
				f := newStrictFixture(t)
				tok := userTok()
				if strings.Contains(route, "{userId}") {
					tok = &httpapitest.Token{Sub: "admin-7", Tenant: seeded.TenantID, Scope: "memory/admin"}
				}
				ev := httpapitest.NewEvent(route, tok, map[string]string{"key": key, "userId": seeded.UserID}, `{"value":"overwritten"}`)
				if !strings.HasPrefix(route, "PUT") {
					ev.Body = ""
				}
				resp, code := f.handle(t, ev, viaJSON)
				if resp.StatusCode != http.StatusBadRequest || code != httpapi.CodeInvalidKey {
					t.Errorf("%s key %q (through JSON: %v) → %d %s, want 400 with code %d", route, key, viaJSON, resp.StatusCode, resp.Body, httpapi.CodeInvalidKey)
				}
				f.checkNothingWritten(t, route+" "+key)
			}
		}
	}
}

// TestStrictIdentity: invalid UTF-8 in the admin path's user ID is a 400,
// in a token's sub or tenant claim a 401, as any malformed identity; none
// writes.
func TestStrictIdentity(t *testing.T) {
	admin := &httpapitest.Token{Sub: "admin-7", Tenant: seeded.TenantID, Scope: "memory/admin"}
	tests := []struct {
		name   string
		route  string
		tok    *httpapitest.Token
		userID string
		status int
		code   int64
	}{
		{"path userId", "PUT /v1/users/{userId}/facts/{key}", admin, "u-1\xff", 400, memory.CodeInvalidID},
		{"path userId, U+FFFD", "PUT /v1/users/{userId}/facts/{key}", admin, "u-1\ufffd", 400, memory.CodeInvalidID},
		{"sub claim", "PUT /v1/me/facts/{key}", &httpapitest.Token{Sub: "u-1\xff", Tenant: "acme", Scope: "memory/user"}, "", 401, httpapi.CodeUnauthenticated},
		{"tenant claim", "PUT /v1/me/facts/{key}", &httpapitest.Token{Sub: "u-1", Tenant: "ac\xffme", Scope: "memory/user"}, "", 401, httpapi.CodeUnauthenticated},
		{"scope claim", "PUT /v1/me/facts/{key}", &httpapitest.Token{Sub: "u-1", Tenant: "acme", Scope: "memory/user\xff"}, "", 403, httpapi.CodeForbidden},
	}
	for _, tt := range tests {
		for _, viaJSON := range []bool{false, true} {
			f := newStrictFixture(t)
			ev := httpapitest.NewEvent(tt.route, tt.tok, map[string]string{"key": "k", "userId": tt.userID}, `{"value":"overwritten"}`)
			resp, code := f.handle(t, ev, viaJSON)
			if resp.StatusCode != tt.status || code != tt.code {
				t.Errorf("%s (through JSON: %v) → %d %s, want %d with code %d", tt.name, viaJSON, resp.StatusCode, resp.Body, tt.status, tt.code)
			}
			f.checkNothingWritten(t, tt.name)
		}
	}
}

// FuzzStrictBody holds the handler's answers to jsontext's verdict on the
// body, read directly with its defaults (which refuse invalid UTF-8,
// unpaired surrogates and duplicate names): whatever it refuses is a 400
// with one of the strict codes and writes nothing; what it accepts is
// never called invalid UTF-8 or a duplicate. Every 4xx leaves the store
// as it was.
func FuzzStrictBody(f *testing.F) {
	for _, s := range []string{
		`{"value":"Lisbon"}`, "{\"value\":\"\xff\xfe\"}", `{"value":"first","value":"second"}`,
		`{"value":"\ud800"}`, `{"value":"\ud83d\ude00"}`, `{"value":"x","m":{"a":[{"b":1,"b":2}]}}`,
		`{"value":"a\\ud800"}`, `{"value":"x"} {}`, `{"\u0076alue":"x","value":"y"}`, `[]`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, b64 bool) {
		fx := newStrictFixture(t)
		resp, code := fx.handle(t, putEvent(userTok(), "k", string(body), b64), false)
		if resp.StatusCode >= 500 {
			t.Fatalf("%q → %d %s", body, resp.StatusCode, resp.Body)
		}
		if resp.StatusCode >= 400 {
			fx.checkNothingWritten(t, "a refused body")
		}
		if len(body) > strictLimit || (!b64 && len(body) == 0) {
			return // 413, or no body at all: not a question of JSON.
		}
		strictErr := strictDecode(body)
		switch {
		case !utf8.Valid(body):
			if resp.StatusCode != 400 || code != httpapi.CodeInvalidUTF8 {
				t.Fatalf("%q is not UTF-8: → %d %s, want 400 with code %d", body, resp.StatusCode, resp.Body, httpapi.CodeInvalidUTF8)
			}
		case strictErr != nil:
			if resp.StatusCode != 400 || (code != httpapi.CodeInvalidUTF8 && code != httpapi.CodeDuplicateMember && code != httpapi.CodeMalformedBody) {
				t.Fatalf("%q (%v) → %d %s, want 400 with a strict code", body, strictErr, resp.StatusCode, resp.Body)
			}
			if errors.Is(strictErr, jsontext.ErrDuplicateName) && code == httpapi.CodeInvalidUTF8 {
				t.Fatalf("%q (%v) → %s", body, strictErr, resp.Body)
			}
		default:
			if code == httpapi.CodeInvalidUTF8 || code == httpapi.CodeDuplicateMember {
				t.Fatalf("%q is strict JSON, but → %d %s", body, resp.StatusCode, resp.Body)
			}
		}
	})
}

// strictDecode returns jsontext's verdict on raw: nil for exactly one
// JSON value with valid UTF-8, no unpaired surrogate and no duplicate
// name.
func strictDecode(raw []byte) error {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := d.ReadValue(); err != nil {
		return err
	}
	if _, err := d.ReadValue(); err == nil {
		return errors.New("more than one value")
	} else if !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// FuzzStrictKey: a path key that is not valid UTF-8, or holds U+FFFD, is
// a 400 with CodeInvalidKey on every route that takes a key, directly or
// through the event's JSON; no 4xx writes.
func FuzzStrictKey(f *testing.F) {
	for _, k := range []string{"k", "k\xff\xfe", "Home City", "k\ufffd", "%2541", "língua", "\xed\xa0\x80"} {
		f.Add(k, false, false)
		f.Add(k, true, true)
	}
	f.Fuzz(func(t *testing.T, key string, viaJSON, del bool) {
		fx := newStrictFixture(t)
		route, body := "PUT /v1/me/facts/{key}", `{"value":"overwritten"}`
		if del {
			route, body = "DELETE /v1/me/facts/{key}", ""
		}
		ev := httpapitest.NewEvent(route, userTok(), map[string]string{"key": key}, body)
		resp, code := fx.handle(t, ev, viaJSON)
		if resp.StatusCode >= 500 {
			t.Fatalf("key %q → %d %s", key, resp.StatusCode, resp.Body)
		}
		if !utf8.ValidString(key) || strings.ContainsRune(key, utf8.RuneError) {
			if resp.StatusCode != 400 || code != httpapi.CodeInvalidKey {
				t.Fatalf("key %q → %d %s, want 400 with code %d", key, resp.StatusCode, resp.Body, httpapi.CodeInvalidKey)
			}
		}
		if resp.StatusCode >= 400 {
			fx.checkNothingWritten(t, "a refused key")
		}
	})
}

// FuzzRefusalWritesNothing varies every part a client controls, as
// FuzzRequest does, and holds every answer to one rule: a 4xx has written
// nothing, and the seeded fact is as it was.
func FuzzRefusalWritesNothing(f *testing.F) {
	f.Add("PUT /v1/me/facts/{key}", "k", "u-1", `{"value":"v"}`, false, "acme", "u-1", "memory/user")
	f.Add("PUT /v1/users/{userId}/facts/{key}", "k", "u-1", `{"value":"v","value":"w"}`, false, "acme", "admin-7", "memory/admin")
	f.Add("DELETE /v1/users/{userId}/facts/{key}", "k\xff", "u-1", "", false, "acme", "admin-7", "memory/admin")
	f.Add("PUT /v1/me/facts/{key}", "k", "", "eyJ2YWx1ZSI6Ilx1ZDgwMCJ9", true, "acme", "u-1", "memory/user")
	f.Add("DELETE /v1/me/facts/{key}", "k", "", "", false, "acme", "u-1", "memory/admin")
	f.Fuzz(func(t *testing.T, route, key, userID, body string, b64 bool, tenant, sub, scope string) {
		fx := newStrictFixture(t)
		tok := &httpapitest.Token{Sub: sub, Tenant: tenant, Scope: scope}
		ev := httpapitest.NewEvent(route, tok, map[string]string{"key": key, "userId": userID}, "")
		ev.Body, ev.IsBase64Encoded = body, b64
		ev.Headers["content-type"] = "application/json"
		resp, _ := fx.handle(t, ev, false)
		if resp.StatusCode >= 500 {
			t.Fatalf("%+v → %d %s", ev, resp.StatusCode, resp.Body)
		}
		if resp.StatusCode >= 400 {
			fx.checkNothingWritten(t, "a refused request")
		}
	})
}

// putDecodeValue is the value of the PUT BenchmarkPutDecode decodes.
var putDecodeValue = strings.Repeat("Lisboa é ", 44)

// BenchmarkPutDecode measures what the strict check adds to decoding a
// PUT: "decode" is Handler.Decode of a PUT whose value is putDecodeValue,
// "unmarshal" the json.Unmarshal of the same body alone, which decoding
// did before the check, as the baseline of the same run.
func BenchmarkPutDecode(b *testing.B) {
	body := `{"value":"` + putDecodeValue + `"}`
	f := newStrictFixture(b)
	ev := putEvent(userTok(), "home_city", body, false)
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.h.Decode(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
