package schema

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Violation is one rule of the message that a message breaks: where, as a
// JSON pointer (RFC 6901, "" for the whole message), the keyword of the
// rule, as the schema names it ("pattern", "required",
// "additionalProperties"…, or "duplicate", "utf8", "order" and
// "uncounted" for the rules the schema cannot state), and the rule in
// words. It never holds a
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
// in Violations, in the order of their pointers.
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

// Validate reports whether m is a valid extraction message of version 1:
// m as JSON ([ExtractionMessage.MarshalJSON]) meets
// extraction-message.v1.json (read by the schema-driven
// check), and m keeps the rules a JSON Schema cannot state: a sentAt that
// is set, turnCount at least previousTurnCount, no count set in an
// uncounted message, and threadTitle and text in valid UTF-8 (a Go string
// may hold any bytes; JSON may not). It
// returns nil or an *InvalidError listing every violation. Size is the
// producer's check.
func (m ExtractionMessage) Validate() error {
	v := m.goRules()
	if m.SentAt.IsZero() {
		v = append(v, sentAtFormat)
	}
	body, err := m.MarshalJSON()
	var value any
	if err == nil {
		err = json.Unmarshal(body, &value)
	}
	if err != nil {
		// Only a time JSON cannot hold (a year past 9999) is not written.
		v = append(v, sentAtFormat)
	} else {
		v = append(v, checkValue(value)...)
	}
	return invalid(v)
}

// sentAtFormat is the violation of a sentAt that is not an RFC 3339
// date-time as Go's time package reads and writes it.
var sentAtFormat = Violation{"/sentAt", "format", "an RFC 3339 date-time"}

// goRules lists the rules of m that the schema cannot state, but for a
// sentAt that is set, which a decoded message always has.
func (m ExtractionMessage) goRules() []Violation {
	var v []Violation
	switch {
	case m.Uncounted && (m.PreviousTurnCount != 0 || m.TurnCount != 0):
		v = append(v, Violation{"", "uncounted", "no turn count in an uncounted message"})
	case m.TurnCount < m.PreviousTurnCount:
		v = append(v, Violation{"/turnCount", "order", "at least previousTurnCount"})
	}
	if !utf8.ValidString(m.ThreadTitle) {
		v = append(v, Violation{"/threadTitle", "utf8", "valid UTF-8"})
	}
	for name, turns := range map[string][]Turn{"/turns": m.Turns, "/contextTurns": m.ContextTurns} {
		for i, t := range turns {
			if !utf8.ValidString(t.Text) {
				v = append(v, Violation{fmt.Sprintf("%s/%d/text", name, i), "utf8", "valid UTF-8"})
			}
		}
	}
	return v
}

// checkValue returns the violations of value, a JSON value read into any,
// against the embedded schema, as the schema-driven check reads it.
func checkValue(value any) []Violation {
	root, err := messageRule()
	if err != nil {
		panic(err) // The embedded file; TestCheckerReadsTheSchema holds it readable.
	}
	return root.check(value, "", nil)
}

// invalid returns nil for no violations, else an *InvalidError with v in
// pointer order.
func invalid(v []Violation) error {
	if len(v) == 0 {
		return nil
	}
	slices.SortStableFunc(v, func(a, b Violation) int { return strings.Compare(a.Pointer, b.Pointer) })
	return &InvalidError{Violations: v}
}

// DecodeExtractionMessageV1 returns the message in body when body is a
// valid extraction message, version 1, and an *InvalidError otherwise.
//
// The body is read once as plain JSON (one value and nothing after it, in
// UTF-8, no member twice) and checked against the embedded schema; then
// decoded into [ExtractionMessage], which refuses the few things the
// schema allows and the Go type cannot hold, and held to the rules the
// schema cannot state. It is stricter than the JSON Schema in a few named
// ways (2.0 as a count, a repeated member, a leap second, a lower-case
// "t" or "z" in sentAt, turnCount below previousTurnCount), each held to
// the library in the tests. SentAt comes back in UTC. A message without
// the two counts comes back Uncounted; one with only one of them is
// refused (dependentRequired).
func DecodeExtractionMessageV1(body []byte) (ExtractionMessage, error) {
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return ExtractionMessage{}, readError(err, body)
	}
	if err := invalid(checkValue(value)); err != nil {
		return ExtractionMessage{}, err
	}
	// The rules beyond the schema hold for a message that meets it.
	var w wire
	if err := json.Unmarshal(body, &w, json.RejectUnknownMembers(true)); err != nil {
		return ExtractionMessage{}, decodeError(err, body)
	}
	m := w.message()
	if err := invalid(m.goRules()); err != nil {
		return ExtractionMessage{}, err
	}
	m.SentAt = m.SentAt.UTC()
	return m, nil
}

// readError turns an error of reading body into any into an
// *InvalidError. Reading stops at a number beyond a 64-bit float's range
// before it reaches a syntax error further on; so the syntax is read
// again first, and the number is reported at the object that holds it
// (never naming a member the sender made up).
func readError(err error, body []byte) error {
	var sem *json.SemanticError
	if !errors.As(err, &sem) {
		return decodeError(err, body)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	_, synErr := dec.ReadValue()
	if synErr == nil {
		if _, synErr = dec.ReadToken(); synErr == io.EOF {
			synErr = nil
		} else if synErr == nil {
			synErr = errors.New("schema: data after the value")
		}
	}
	if synErr != nil {
		return decodeError(synErr, body)
	}
	return &InvalidError{Violations: []Violation{{parent(sem.JSONPointer), "range", "numbers within a 64-bit float's range"}}}
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
		return &InvalidError{Violations: []Violation{{string(sem.JSONPointer), sentAtFormat.Keyword, sentAtFormat.Rule}}}
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
