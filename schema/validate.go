package schema

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/usermemory/usermemory/memory"
)

// Violation is one rule of the message that a message breaks: where, as a
// JSON pointer (RFC 6901, "" for the whole message), the keyword of the
// rule, as the schema names it ("pattern", "required",
// "additionalProperties"…, or "duplicate", "utf8" and "order" for the
// rules the schema cannot state), and the rule in words. It never holds a
// value of the message: a pointer names only members of the schema and
// array indices (an unknown or repeated member is reported at the object
// that holds it).
type Violation struct {
	Pointer string
	Keyword string
	Rule    string
}

// String returns the pointer and the keyword, as "/turns/1/role (enum)";
// the whole message is written "/".
func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return p + " (" + v.Keyword + ")"
}

// InvalidError is the error of a message that is not valid: a body that is
// not one JSON value (NotJSON), or a message that breaks the rules listed
// in Violations, in the order found.
type InvalidError struct {
	NotJSON    bool
	Violations []Violation
}

// maxListed is the most violations an error text lists.
const maxListed = 5

// Error says where the message fails, never what its values are.
func (e *InvalidError) Error() string {
	if e.NotJSON {
		return "schema: not JSON"
	}
	return "schema: not the schema at " + e.Where()
}

// Where lists the violations, the first five and how many more.
func (e *InvalidError) Where() string {
	list := make([]string, 0, min(len(e.Violations), maxListed+1))
	for i, v := range e.Violations {
		if i == maxListed {
			list = append(list, fmt.Sprintf("and %d more", len(e.Violations)-maxListed))
			break
		}
		list = append(list, v.String())
	}
	return strings.Join(list, ", ")
}

// Explain lists the violations with their rules in words, for a person:
// "/tenantId: 1 to 128 ASCII letters, digits or - _ . : @ | + =".
func (e *InvalidError) Explain() string {
	if e.NotJSON {
		return "not one JSON value"
	}
	list := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		p := v.Pointer
		if p == "" {
			p = "/"
		}
		list = append(list, p+": "+v.Rule)
	}
	return strings.Join(list, "; ")
}

// The rules in words.
const (
	ruleID      = "1 to 128 ASCII letters, digits or - _ . : @ | + ="
	ruleCount   = "an integer from 0 to 2147483647"
	ruleModelID = "1 to 256 letters, digits or . _ : / + -"
	ruleTrace   = "at most 256 printable ASCII characters, no spaces"
	ruleRole    = "user, assistant or tool"
)

// ruleTitle is the rule of threadTitle in words.
var ruleTitle = fmt.Sprintf("1 to %d characters of valid UTF-8", MaxThreadTitleChars)

// Validate reports whether m is a valid extraction message of version 1:
// the rules of extraction-message.v1.json (IDs as [memory.ValidID] has
// them, counts, at most [MaxTurns] turns and context turns, the roles,
// threadTitle, cheapModelId and Meta
// values) and the ones a JSON Schema cannot state: a sentAt that is set,
// turnCount at least previousTurnCount, and text that is valid UTF-8 (a
// Go string may hold any bytes; JSON may not). It returns nil or an
// *InvalidError listing every violation. Size is the producer's check.
func (m ExtractionMessage) Validate() error {
	var v []Violation
	fail := func(pointer, keyword, rule string) { v = append(v, Violation{pointer, keyword, rule}) }
	if m.Version != ExtractionMessageVersion {
		fail("/version", "const", "1")
	}
	for _, id := range []struct{ name, value string }{{"tenantId", m.TenantID}, {"userId", m.UserID}, {"threadId", m.ThreadID}} {
		if !memory.ValidID(id.value) {
			fail("/"+id.name, "pattern", ruleID)
		}
	}
	for _, c := range []struct {
		name  string
		value int
	}{{"previousTurnCount", m.PreviousTurnCount}, {"turnCount", m.TurnCount}} {
		if c.value < 0 {
			fail("/"+c.name, "minimum", ruleCount)
		} else if c.value > MaxCount {
			fail("/"+c.name, "maximum", ruleCount)
		}
	}
	if m.TurnCount < m.PreviousTurnCount {
		fail("/turnCount", "order", "at least previousTurnCount")
	}
	if !utf8.ValidString(m.ThreadTitle) {
		fail("/threadTitle", "utf8", ruleTitle)
	} else if utf8.RuneCountInString(m.ThreadTitle) > MaxThreadTitleChars {
		fail("/threadTitle", "maxLength", ruleTitle)
	}
	validateTurns("/turns", m.Turns, fail)
	validateTurns("/contextTurns", m.ContextTurns, fail)
	if m.SentAt.IsZero() {
		fail("/sentAt", "format", "an RFC 3339 date-time")
	}
	if m.CheapModelID != "" && !matches(m.CheapModelID, 1, 256, modelIDByte) {
		fail("/cheapModelId", "pattern", ruleModelID)
	}
	if m.Meta != nil {
		if !matches(m.Meta.RequestID, 0, 256, traceByte) {
			fail("/meta/requestId", "pattern", ruleTrace)
		}
		if !matches(m.Meta.TraceID, 0, 256, traceByte) {
			fail("/meta/traceId", "pattern", ruleTrace)
		}
	}
	if len(v) > 0 {
		return &InvalidError{Violations: v}
	}
	return nil
}

// validateTurns reports through fail the rules that turns, the array at
// pointer, breaks: at most MaxTurns items, the roles, UTF-8 text.
func validateTurns(pointer string, turns []Turn, fail func(pointer, keyword, rule string)) {
	if len(turns) > MaxTurns {
		fail(pointer, "maxItems", fmt.Sprintf("at most %d turns", MaxTurns))
	}
	for i, t := range turns {
		switch t.Role {
		case memory.RoleUser, memory.RoleAssistant, memory.RoleTool:
		default:
			fail(fmt.Sprintf("%s/%d/role", pointer, i), "enum", ruleRole)
		}
		if !utf8.ValidString(t.Text) {
			fail(fmt.Sprintf("%s/%d/text", pointer, i), "utf8", "valid UTF-8")
		}
	}
}

// matches reports whether s is lo to hi bytes, each allowed by in.
func matches(s string, lo, hi int, in func(byte) bool) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !in(s[i]) {
			return false
		}
	}
	return true
}

func modelIDByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("._:/+-", b) >= 0
}

func traceByte(b byte) bool { return b >= '!' && b <= '~' }

// DecodeExtractionMessageV1 returns the message in body when body is a
// valid extraction message, version 1, and an *InvalidError otherwise.
//
// The decode is strict: one JSON object and nothing after it, in UTF-8,
// no member twice, no unknown member, no null, every required member
// present, integers written as integers, and sentAt an RFC 3339 date-time
// as Go's time package reads it; then [ExtractionMessage.Validate]. It is
// stricter than the JSON Schema in a few named ways (2.0 as a count, a
// repeated member, a leap second, a lower-case "t" or "z" in sentAt), each
// held to the library in the tests. SentAt comes back in UTC.
func DecodeExtractionMessageV1(body []byte) (ExtractionMessage, error) {
	var m ExtractionMessage
	if err := json.Unmarshal(body, &m, json.RejectUnknownMembers(true)); err != nil {
		return ExtractionMessage{}, decodeError(err, body)
	}
	var shape messageShape
	if err := json.Unmarshal(body, &shape); err != nil {
		return ExtractionMessage{}, decodeError(err, body) // Read once already: not reached.
	}
	v := shape.violations()
	if err := m.Validate(); err != nil {
		var inv *InvalidError
		errors.As(err, &inv)
		v = append(v, inv.Violations...)
	}
	if len(v) > 0 {
		return ExtractionMessage{}, &InvalidError{Violations: v}
	}
	m.SentAt = m.SentAt.UTC()
	return m, nil
}

// decodeError turns an error of the JSON decoder into an *InvalidError
// that names places and rules only, never a value or an unknown name.
func decodeError(err error, body []byte) error {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return &InvalidError{Violations: []Violation{{parent(syn.JSONPointer), "duplicate", "each member at most once"}}}
	case errors.As(err, &syn) && stdjson.Valid(body):
		// JSON to a lenient reader, which would replace the bytes or the
		// lone surrogate escape that this one refuses.
		return &InvalidError{Violations: []Violation{{string(syn.JSONPointer), "utf8", "valid UTF-8, no lone surrogate escape"}}}
	case errors.As(err, &sem) && errors.Is(sem.Err, json.ErrUnknownName):
		return &InvalidError{Violations: []Violation{{parent(sem.JSONPointer), "additionalProperties", "no member but those of the schema"}}}
	case errors.As(err, &sem) && sem.GoType == reflect.TypeFor[time.Time]():
		return &InvalidError{Violations: []Violation{{string(sem.JSONPointer), "format", "an RFC 3339 date-time"}}}
	case errors.As(err, &sem) && sem.JSONPointer != "":
		return &InvalidError{Violations: []Violation{{string(sem.JSONPointer), "type", "a " + kindName(sem.GoType)}}}
	case errors.As(err, &sem):
		return &InvalidError{Violations: []Violation{{"", "type", "an object"}}}
	}
	return &InvalidError{NotJSON: true}
}

// parent returns the pointer of the object that holds the member p points
// to, so that an error never names a member the sender made up.
func parent(p jsontext.Pointer) string { return string(p.Parent()) }

// kindName names the JSON kind a Go type is read from.
func kindName(t reflect.Type) string {
	if t == nil {
		return "value of another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Slice:
		return "array"
	case reflect.Struct, reflect.Pointer:
		return "object"
	}
	return "value of another type"
}

// messageShape records which members a body has and which are null, the
// two things a decode into ExtractionMessage cannot tell from a zero
// value. A member left out is empty; a null one is "null". It is read
// only from a body that decoded into ExtractionMessage, so every member
// has the right type or is null.
type messageShape struct {
	Version           jsontext.Value `json:"version"`
	TenantID          jsontext.Value `json:"tenantId"`
	UserID            jsontext.Value `json:"userId"`
	ThreadID          jsontext.Value `json:"threadId"`
	ThreadTitle       jsontext.Value `json:"threadTitle"`
	PreviousTurnCount jsontext.Value `json:"previousTurnCount"`
	TurnCount         jsontext.Value `json:"turnCount"`
	Turns             jsontext.Value `json:"turns"`
	ContextTurns      jsontext.Value `json:"contextTurns"`
	SentAt            jsontext.Value `json:"sentAt"`
	CheapModelID      jsontext.Value `json:"cheapModelId"`
	Meta              jsontext.Value `json:"meta"`
}

type turnShape struct {
	Role jsontext.Value `json:"role"`
	Text jsontext.Value `json:"text"`
}

type metaShape struct {
	RequestID jsontext.Value `json:"requestId"`
	TraceID   jsontext.Value `json:"traceId"`
}

// violations lists the required members missing and the null members.
func (s *messageShape) violations() []Violation {
	var v []Violation
	check := func(pointer string, value jsontext.Value, required bool) bool {
		switch {
		case len(value) == 0 && required:
			p := jsontext.Pointer(pointer)
			v = append(v, Violation{parent(p), "required", "has " + p.LastToken()})
		case len(value) > 0 && value.Kind() == 'n':
			v = append(v, Violation{pointer, "type", "not null"})
		default:
			return len(value) > 0
		}
		return false
	}
	check("/version", s.Version, true)
	check("/tenantId", s.TenantID, true)
	check("/userId", s.UserID, true)
	check("/threadId", s.ThreadID, true)
	if check("/threadTitle", s.ThreadTitle, false) && string(s.ThreadTitle) == `""` {
		v = append(v, Violation{"/threadTitle", "minLength", ruleTitle})
	}
	check("/previousTurnCount", s.PreviousTurnCount, true)
	check("/turnCount", s.TurnCount, true)
	if check("/turns", s.Turns, true) {
		turnViolations("/turns", s.Turns, check)
	}
	if check("/contextTurns", s.ContextTurns, false) {
		turnViolations("/contextTurns", s.ContextTurns, check)
	}
	check("/sentAt", s.SentAt, true)
	if check("/cheapModelId", s.CheapModelID, false) && string(s.CheapModelID) == `""` {
		v = append(v, Violation{"/cheapModelId", "pattern", ruleModelID})
	}
	var m metaShape
	if check("/meta", s.Meta, false) && json.Unmarshal(s.Meta, &m) == nil {
		check("/meta/requestId", m.RequestID, false)
		check("/meta/traceId", m.TraceID, false)
	}
	return v
}

// turnViolations runs check on the items of the array of turns at pointer
// and on their members, all required.
func turnViolations(pointer string, turns jsontext.Value, check func(string, jsontext.Value, bool) bool) {
	var items []jsontext.Value
	_ = json.Unmarshal(turns, &items)
	for i, item := range items {
		at := fmt.Sprintf("%s/%d", pointer, i)
		var t turnShape
		if check(at, item, true) && json.Unmarshal(item, &t) == nil {
			check(at+"/role", t.Role, true)
			check(at+"/text", t.Text, true)
		}
	}
}
