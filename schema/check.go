package schema

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
)

// rule is one schema of extraction-message.v1.json (the whole message, a
// member, an item or a definition), read from the embedded file. Its
// fields are the keywords the checker applies; the file is read with
// unknown members refused, so that a keyword added to the schema that the
// checker does not apply stops every check instead of being skipped.
type rule struct {
	Schema               string              `json:"$schema"`
	ID                   string              `json:"$id"`
	Title                string              `json:"title"`
	Description          string              `json:"description"`
	Defs                 map[string]*rule    `json:"$defs"`
	Ref                  string              `json:"$ref"`
	Type                 string              `json:"type"`
	Const                any                 `json:"const"`
	Enum                 []any               `json:"enum"`
	Pattern              string              `json:"pattern"`
	Format               string              `json:"format"`
	MinLength            *int                `json:"minLength"`
	MaxLength            *int                `json:"maxLength"`
	Minimum              *float64            `json:"minimum"`
	Maximum              *float64            `json:"maximum"`
	MaxItems             *int                `json:"maxItems"`
	Required             []string            `json:"required"`
	DependentRequired    map[string][]string `json:"dependentRequired"`
	Properties           map[string]*rule    `json:"properties"`
	AdditionalProperties *bool               `json:"additionalProperties"`
	Items                *rule               `json:"items"`

	re *regexp.Regexp // Pattern, compiled
	// reLo and reHi bound the length, in characters, of a string Pattern
	// accepts when it is one character class counted ({m,n}): re then
	// matches the class repeated any number of times (see compilePattern).
	reLo, reHi int
}

// countedClass is a pattern that is one character class counted, as the
// IDs' ^[A-Za-z0-9_.:@|+=-]{1,128}$: Go's regexp compiles {1,128} into
// 128 copies of the class, about a millisecond per pattern at the first
// message of every execution environment.
var countedClass = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\^(\[(?:[^\]\\]|\\.)+\])\{(\d+),(\d+)\}\$$`)
})

// compilePattern compiles a schema pattern. One character class counted,
// ^[…]{m,n}$, becomes ^[…]*$ with the bounds m and n on the length, which
// accepts the same strings: the class matches one character each time.
func compilePattern(p string) (re *regexp.Regexp, lo, hi int, err error) {
	if m := countedClass().FindStringSubmatch(p); m != nil {
		lo, _ = strconv.Atoi(m[2])
		hi, _ = strconv.Atoi(m[3])
		re, err = regexp.Compile("^" + m[1] + "*$")
		return re, lo, hi, err
	}
	re, err = regexp.Compile(p)
	return re, 0, -1, err
}

// messageRule returns the schema of the extraction message, version 1,
// read once from the embedded file, or why the checker cannot apply it.
var messageRule = sync.OnceValues(func() (*rule, error) {
	return compile(extractionMessageV1)
})

// compile reads a schema and resolves its references and patterns.
func compile(doc []byte) (*rule, error) {
	var root rule
	if err := json.Unmarshal(doc, &root, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("schema: a keyword the checker does not apply: %w", err)
	}
	var resolve func(r *rule) error
	resolve = func(r *rule) error {
		if r == nil {
			return nil
		}
		switch {
		case r.Ref != "":
			def := root.Defs[strings.TrimPrefix(r.Ref, "#/$defs/")]
			if def == nil || !strings.HasPrefix(r.Ref, "#/$defs/") {
				return fmt.Errorf("schema: unresolved $ref %q", r.Ref)
			}
			*r = *def
		case r.Format != "" && r.Format != "date-time":
			return fmt.Errorf("schema: format %q", r.Format)
		case !slices.Contains([]string{"", "object", "array", "string", "integer"}, r.Type):
			return fmt.Errorf("schema: type %q", r.Type)
		}
		if r.Pattern != "" && r.re == nil {
			re, lo, hi, err := compilePattern(r.Pattern)
			if err != nil {
				return fmt.Errorf("schema: pattern %q: %w", r.Pattern, err)
			}
			r.re, r.reLo, r.reHi = re, lo, hi
		}
		for _, p := range r.Properties {
			if err := resolve(p); err != nil {
				return err
			}
		}
		return resolve(r.Items)
	}
	for _, d := range root.Defs {
		if err := resolve(d); err != nil {
			return nil, err
		}
	}
	return &root, resolve(&root)
}

// check appends to v the rules of r that value, a JSON value read into
// any (map[string]any, []any, string, float64, bool or nil) at pointer,
// breaks. It names places and rules, never a value or an unknown member.
func (r *rule) check(value any, pointer string, v []Violation) []Violation {
	fail := func(keyword, words string) { v = append(v, Violation{pointer, keyword, words}) }
	if r.Type != "" && !isType(value, r.Type) {
		fail("type", "a"+article(r.Type)+" "+r.Type)
		return v
	}
	if r.Const != nil && value != r.Const {
		fail("const", fmt.Sprint(r.Const))
	}
	if r.Enum != nil && !slices.Contains(r.Enum, value) {
		fail("enum", "one of "+strings.Trim(fmt.Sprintf("%q", r.Enum), "[]"))
	}
	switch x := value.(type) {
	case string:
		v = r.checkString(x, pointer, v)
	case float64:
		if r.Minimum != nil && x < *r.Minimum {
			fail("minimum", fmt.Sprintf("at least %v", *r.Minimum))
		}
		if r.Maximum != nil && x > *r.Maximum {
			fail("maximum", fmt.Sprintf("at most %v", *r.Maximum))
		}
	case []any:
		if r.MaxItems != nil && len(x) > *r.MaxItems {
			fail("maxItems", fmt.Sprintf("at most %d items", *r.MaxItems))
		}
		for i, item := range x {
			if r.Items != nil {
				v = r.Items.check(item, fmt.Sprintf("%s/%d", pointer, i), v)
			}
		}
	case map[string]any:
		v = r.checkObject(x, pointer, v)
	}
	return v
}

// checkString applies the rules of a string: length, pattern and format.
func (r *rule) checkString(s, pointer string, v []Violation) []Violation {
	n := utf8.RuneCountInString(s)
	if r.MinLength != nil && n < *r.MinLength {
		v = append(v, Violation{pointer, "minLength", fmt.Sprintf("at least %d characters", *r.MinLength)})
	}
	if r.MaxLength != nil && n > *r.MaxLength {
		v = append(v, Violation{pointer, "maxLength", fmt.Sprintf("at most %d characters", *r.MaxLength)})
	}
	if r.re != nil && (!r.re.MatchString(s) || n < r.reLo || (r.reHi >= 0 && n > r.reHi)) {
		v = append(v, Violation{pointer, "pattern", "matches " + r.Pattern})
	}
	if r.Format == "date-time" {
		// RFC 3339's shape (Go's reading also takes a one-digit hour),
		// read as time.Time reads it: stricter than the schema in a few
		// named ways (a leap second, a lower-case t or z).
		if !dateTime().MatchString(s) || (&time.Time{}).UnmarshalText([]byte(s)) != nil {
			v = append(v, Violation{pointer, sentAtFormat.Keyword, sentAtFormat.Rule})
		}
	}
	return v
}

// dateTime is the shape of an RFC 3339 date-time, upper-case T and Z,
// compiled at its first use rather than at every cold start.
var dateTime = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`)
})

// checkObject applies the rules of an object: its required members, the
// members each member requires (dependentRequired), no member but its
// properties, and each member's own rules, in name order.
func (r *rule) checkObject(obj map[string]any, pointer string, v []Violation) []Violation {
	for _, name := range r.Required {
		if _, ok := obj[name]; !ok {
			v = append(v, Violation{pointer, "required", "has " + name})
		}
	}
	if len(r.DependentRequired) > 0 {
		v = r.checkDependent(obj, pointer, v)
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	unknown := false
	for _, name := range names {
		p, ok := r.Properties[name]
		if !ok {
			unknown = true
			continue
		}
		v = p.check(obj[name], pointer+"/"+escapeToken(name), v)
	}
	if unknown && r.AdditionalProperties != nil && !*r.AdditionalProperties {
		v = append(v, Violation{pointer, "additionalProperties", "no member but those of the schema"})
	}
	return v
}

// checkDependent applies dependentRequired: each member present requires
// the members it lists, in name order.
func (r *rule) checkDependent(obj map[string]any, pointer string, v []Violation) []Violation {
	for _, name := range slices.Sorted(maps.Keys(r.DependentRequired)) {
		if _, ok := obj[name]; !ok {
			continue
		}
		for _, dep := range r.DependentRequired[name] {
			if _, ok := obj[dep]; !ok {
				v = append(v, Violation{pointer, "dependentRequired", "has " + dep + " with " + name})
			}
		}
	}
	return v
}

// isType reports whether value is of the JSON Schema type t.
func isType(value any, t string) bool {
	switch x := value.(type) {
	case map[string]any:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case float64:
		return t == "integer" && x == math.Trunc(x)
	}
	return false
}

// article returns "n" for a type named with a vowel first, "" otherwise.
func article(t string) string {
	if strings.ContainsRune("aeiou", rune(t[0])) {
		return "n"
	}
	return ""
}

// escapeToken escapes a member name as a JSON pointer token (RFC 6901).
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
