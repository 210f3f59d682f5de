package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Violation is one rule of a schema that a message breaks: where, as a
// JSON pointer (RFC 6901, "" for the whole message), and the keyword of
// the rule, such as "pattern" or "additionalProperties". It never holds a
// value of the message: a pointer names only members of the schema and
// array indices (an unknown member is reported at the object that holds
// it, with additionalProperties).
type Violation struct {
	Pointer string
	Keyword string
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

// InvalidError is the error of a body that is not a valid message: not
// one JSON value (NotJSON), or a JSON value that breaks the rules listed
// in Violations, sorted and without repeats.
type InvalidError struct {
	NotJSON    bool
	Violations []Violation
}

// maxListed is the most violations an error text lists.
const maxListed = 5

// Error says where the body fails, never what its values are.
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

// DecodeExtractionMessageV1 returns the message in body when body is an
// extraction message as extraction-message.v1.json describes it, and an
// *InvalidError otherwise.
//
// It reads the JSON as the JSON Schema library does (one value, numbers
// kept exact, white space around it only) and applies the schema's rules
// with the library's semantics, format date-time included: a number is an
// integer when its value is (2.0 and 1e2 are), and sentAt follows the
// library's reading of RFC 3339, leap second included (23:59:60Z is
// 00:00:00Z of the next day). A test holds it to the library on a corpus
// and a fuzz target. SentAt comes back in UTC.
func DecodeExtractionMessageV1(body []byte) (ExtractionMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return ExtractionMessage{}, &InvalidError{NotJSON: true}
	}
	if _, err := dec.Token(); err != io.EOF {
		return ExtractionMessage{}, &InvalidError{NotJSON: true}
	}
	var c checker
	m := c.message(doc)
	if len(c.violations) > 0 {
		sort.Slice(c.violations, func(i, j int) bool {
			a, b := c.violations[i], c.violations[j]
			if a.Pointer != b.Pointer {
				return a.Pointer < b.Pointer
			}
			return a.Keyword < b.Keyword
		})
		out := c.violations[:0]
		for i, v := range c.violations {
			if i == 0 || v != c.violations[i-1] {
				out = append(out, v)
			}
		}
		return ExtractionMessage{}, &InvalidError{Violations: out}
	}
	return m, nil
}

// checker collects the violations of one message while it reads it.
type checker struct {
	violations []Violation
}

func (c *checker) fail(pointer, keyword string) {
	c.violations = append(c.violations, Violation{Pointer: pointer, Keyword: keyword})
}

// object checks the type, required and additionalProperties rules of an
// object whose properties are known, and returns it (nil when it is not
// an object).
func (c *checker) object(v any, pointer string, required []string, known func(string) bool) map[string]any {
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(pointer, "type")
		return nil
	}
	for _, name := range required {
		if _, ok := obj[name]; !ok {
			c.fail(pointer, "required")
			break
		}
	}
	for name := range obj {
		if !known(name) {
			c.fail(pointer, "additionalProperties")
			break
		}
	}
	return obj
}

var messageRequired = []string{"version", "tenantId", "userId", "threadId", "previousTurnCount", "turnCount", "turns", "sentAt"}

func messageMember(name string) bool {
	switch name {
	case "version", "tenantId", "userId", "threadId", "previousTurnCount", "turnCount", "turns", "sentAt", "cheapModelId", "meta":
		return true
	}
	return false
}

// message checks the whole message and returns what it could read.
func (c *checker) message(v any) ExtractionMessage {
	var m ExtractionMessage
	obj := c.object(v, "", messageRequired, messageMember)
	for name, val := range obj {
		p := "/" + name
		switch name {
		case "version":
			if !isNumber(val, 1) {
				c.fail(p, "const")
			}
			m.Version = ExtractionMessageVersion
		case "tenantId":
			m.TenantID = c.pattern(val, p, idByte, 1, 128)
		case "userId":
			m.UserID = c.pattern(val, p, idByte, 1, 128)
		case "threadId":
			m.ThreadID = c.pattern(val, p, idByte, 1, 128)
		case "previousTurnCount":
			m.PreviousTurnCount = c.count(val, p)
		case "turnCount":
			m.TurnCount = c.count(val, p)
		case "turns":
			m.Turns = c.turns(val, p)
		case "sentAt":
			s, ok := val.(string)
			if !ok {
				c.fail(p, "type")
				break
			}
			t, ok := parseDateTime(s)
			if !ok {
				c.fail(p, "format")
			}
			m.SentAt = t
		case "cheapModelId":
			m.CheapModelID = c.pattern(val, p, modelIDByte, 1, 256)
		case "meta":
			m.Meta = c.meta(val, p)
		}
	}
	return m
}

var turnRequired = []string{"role", "text"}

func turnMember(name string) bool { return name == "role" || name == "text" }

func (c *checker) turns(v any, pointer string) []Turn {
	arr, ok := v.([]any)
	if !ok {
		c.fail(pointer, "type")
		return nil
	}
	if len(arr) > MaxTurns {
		c.fail(pointer, "maxItems")
	}
	out := make([]Turn, len(arr))
	for i, item := range arr {
		p := pointer + "/" + strconv.Itoa(i)
		obj := c.object(item, p, turnRequired, turnMember)
		for name, val := range obj {
			s, ok := val.(string)
			switch name {
			case "role":
				if !ok || (s != "user" && s != "assistant" && s != "tool") {
					c.fail(p+"/role", "enum")
				}
				out[i].Role = s
			case "text":
				if !ok {
					c.fail(p+"/text", "type")
				}
				out[i].Text = s
			}
		}
	}
	return out
}

func metaMember(name string) bool { return name == "requestId" || name == "traceId" }

func (c *checker) meta(v any, pointer string) *Meta {
	obj := c.object(v, pointer, nil, metaMember)
	if obj == nil {
		return nil
	}
	m := &Meta{}
	for name, val := range obj {
		switch name {
		case "requestId":
			m.RequestID = c.pattern(val, pointer+"/requestId", traceByte, 0, 256)
		case "traceId":
			m.TraceID = c.pattern(val, pointer+"/traceId", traceByte, 0, 256)
		}
	}
	return m
}

// pattern checks a string against a pattern of the form ^[class]{lo,hi}$
// whose class is ASCII: every byte in the class, lo to hi bytes. A byte
// outside ASCII is outside the class, so bytes count as characters.
func (c *checker) pattern(v any, pointer string, in func(byte) bool, lo, hi int) string {
	s, ok := v.(string)
	if !ok {
		c.fail(pointer, "type")
		return ""
	}
	if len(s) < lo || len(s) > hi {
		c.fail(pointer, "pattern")
		return s
	}
	for i := 0; i < len(s); i++ {
		if !in(s[i]) {
			c.fail(pointer, "pattern")
			break
		}
	}
	return s
}

// idByte is the class of $defs/id: [A-Za-z0-9_.:@|+=-].
func idByte(b byte) bool {
	return alnum(b) || strings.IndexByte("_.:@|+=-", b) >= 0
}

// modelIDByte is the class of cheapModelId: [A-Za-z0-9._:/+-].
func modelIDByte(b byte) bool {
	return alnum(b) || strings.IndexByte("._:/+-", b) >= 0
}

// traceByte is the class of $defs/traceValue: [!-~].
func traceByte(b byte) bool { return b >= '!' && b <= '~' }

func alnum(b byte) bool {
	return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

// count checks $defs/count: an integer (a number whose value is one) in
// [0, MaxCount]. A number that is not an integer breaks only "type", as
// the library stops at the type.
func (c *checker) count(v any, pointer string) int {
	r, ok := rat(v)
	if !ok || !r.IsInt() {
		c.fail(pointer, "type")
		return 0
	}
	if r.Sign() < 0 {
		c.fail(pointer, "minimum")
		return 0
	}
	if r.Cmp(big.NewRat(MaxCount, 1)) > 0 {
		c.fail(pointer, "maximum")
		return 0
	}
	return int(r.Num().Int64())
}

// rat returns the exact value of a JSON number, as the library reads it;
// false for anything else, and for a number whose exponent is out of
// big.Rat's range.
func rat(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(string(n))
}

// isNumber reports whether v is a JSON number equal to want.
func isNumber(v any, want int64) bool {
	r, ok := rat(v)
	return ok && r.Cmp(big.NewRat(want, 1)) == 0
}

// parseDateTime reads a date-time as the library's format check does
// (RFC 3339 section 5.6, read by santhosh-tekuri/jsonschema v6), with its
// edge cases: t or T, z or Z, any number of fraction digits, fields read
// by strconv.Atoi (so "+1" is an hour), a leap second only at 23:59 UTC.
// It returns the instant in UTC, fractions past nanoseconds dropped, a leap
// second counted as the first second of the next minute.
func parseDateTime(s string) (time.Time, bool) {
	if len(s) < 20 || (s[10] != 't' && s[10] != 'T') {
		return time.Time{}, false
	}
	date, err := time.Parse("2006-01-02", s[:10])
	if err != nil {
		return time.Time{}, false
	}
	str := s[11:] // at least 9 bytes
	if str[2] != ':' || str[5] != ':' {
		return time.Time{}, false
	}
	var hms []int
	for _, tok := range strings.SplitN(str[:8], ":", 3) {
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 {
			return time.Time{}, false
		}
		hms = append(hms, i)
	}
	if len(hms) != 3 {
		return time.Time{}, false
	}
	h, m, sec := hms[0], hms[1], hms[2]
	if h > 23 || m > 59 || sec > 60 {
		return time.Time{}, false
	}
	str = str[8:]

	nanos := 0
	if rem, ok := strings.CutPrefix(str, "."); ok {
		digits := 0
		for digits < len(rem) && rem[digits] >= '0' && rem[digits] <= '9' {
			digits++
		}
		if digits == 0 {
			return time.Time{}, false
		}
		for i := range 9 {
			nanos *= 10
			if i < digits {
				nanos += int(rem[i] - '0')
			}
		}
		str = rem[digits:]
	}

	east := 0 // the offset, in minutes east of UTC
	if str != "z" && str != "Z" {
		if len(str) != 6 {
			return time.Time{}, false
		}
		sign := 1
		switch str[0] {
		case '+':
		case '-':
			sign = -1
		default:
			return time.Time{}, false
		}
		str = str[1:]
		if str[2] != ':' {
			return time.Time{}, false
		}
		var zhm []int
		for _, tok := range strings.SplitN(str, ":", 2) {
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 {
				return time.Time{}, false
			}
			zhm = append(zhm, i)
		}
		if zhm[0] > 23 || zhm[1] > 59 {
			return time.Time{}, false
		}
		east = sign * (zhm[0]*60 + zhm[1])
	}

	// A leap second is at 23:59 UTC. (Not reduced modulo a day, as in the
	// library: 23:59-23:59 is minute 2878.)
	if utc := h*60 + m - east; sec >= 60 {
		if utc < 0 {
			utc += 24 * 60
		}
		if utc/60 != 23 || utc%60 != 59 {
			return time.Time{}, false
		}
	}
	t := time.Date(date.Year(), date.Month(), date.Day(), h, m, sec, nanos, time.UTC)
	return t.Add(-time.Duration(east) * time.Minute), true
}
