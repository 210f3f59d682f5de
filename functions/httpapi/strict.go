package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// checkJSON refuses a body that a JSON decoder reads only by rewriting or
// dropping part of it, with a 400 *memory.Error:
//
//   - CodeInvalidUTF8 for bytes that are not UTF-8, and for an escaped
//     surrogate that is not half of a pair ("\ud800"): encoding/json turns
//     either into U+FFFD. RFC 8259 section 8.1 requires UTF-8; RFC 7493
//     (I-JSON) section 2.1 forbids unpaired surrogates.
//   - CodeMalformedBody for text that is not exactly one JSON value:
//     syntax errors, and trailing data after the value (white space
//     aside).
//   - CodeDuplicateMember for an object, at any depth, that names a
//     member twice (compared after unescaping, so "a" and "\u0061" are
//     the same name): encoding/json keeps the last one silently. RFC 7493
//     section 2.3 forbids it.
//
// What the value must be (one object, its only member "value", a string)
// is checked afterwards by decodeBody.
func checkJSON(raw []byte) error {
	if !utf8.Valid(raw) {
		return fail(http.StatusBadRequest, CodeInvalidUTF8, "the body is not valid UTF-8")
	}
	if !json.Valid(raw) {
		return fail(http.StatusBadRequest, CodeMalformedBody, `the body must be one JSON object {"value": "…"}`)
	}
	if loneSurrogate(raw) {
		return fail(http.StatusBadRequest, CodeInvalidUTF8,
			`the body escapes a surrogate that is not half of a pair (such as \ud800): it is not Unicode text`)
	}
	if name, ok := duplicateMember(raw); ok {
		return fail(http.StatusBadRequest, CodeDuplicateMember, "the body names the member "+quoteShort(name)+" twice in one object")
	}
	return nil
}

// loneSurrogate reports whether raw, valid JSON, escapes a UTF-16
// surrogate that is not part of a high-low pair.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		// raw is valid JSON: a backslash is inside a string and starts an
		// escape, \uXXXX or one more character.
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r := hex4(raw[i+2 : i+6])
		i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true // A low half with no high half before it.
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if lo := hex4(raw[i+3 : i+7]); lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

// hex4 returns the value of four hex digits, which valid JSON guarantees
// after \u.
func hex4(b []byte) rune {
	v, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(v)
}

// duplicateMember returns a member name that an object of raw, valid
// JSON, names twice, at any depth.
func duplicateMember(raw []byte) (string, bool) {
	type frame struct {
		names    map[string]bool // nil for an array
		wantName bool            // the next token of an object is a name
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].names != nil {
			stack[n-1].wantName = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // io.EOF: raw is valid, so nothing else.
		}
		if n := len(stack); n > 0 && stack[n-1].wantName {
			top := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			name, _ := tok.(string)
			if top.names[name] {
				return name, true
			}
			top.names[name], top.wantName = true, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{names: map[string]bool{}, wantName: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// quoteShort quotes a member name for an error message, cut to 40 runes.
func quoteShort(name string) string {
	if utf8.RuneCountInString(name) > 40 {
		name = string([]rune(name)[:40]) + "…"
	}
	return fmt.Sprintf("%q", name)
}
