package dynamorepo

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/memory"
)

// Attribute names of a user's item, besides [KeyAttribute] and
// [TTLAttribute].
const (
	attrFacts    = "facts"
	attrVersion  = "ver"
	attrThreads  = "threads"
	attrErasedAt = "erasedAt"
	attrRemoved  = "removed"
	attrCleared  = "clearedAt"

	// Inside a fact.
	attrValue     = "v"
	attrUpdatedAt = "t"
	attrSource    = "s"
	// Inside a thread watermark ("t" is its time).
	attrTurnCount = "n"
)

// MaxItemBytes is DynamoDB's limit on the size of an item: 400 KB.
const MaxItemBytes = 400 * 1024

// ErrItemTooLarge is wrapped by the error of a write whose item would be
// over [MaxItemBytes]; the item is never sent.
var ErrItemTooLarge = errors.New("dynamorepo: item over DynamoDB's 400 KB limit")

// ErrCorruptItem is wrapped by the error of a read whose item has an
// attribute of the wrong type or form; the message names the attribute.
var ErrCorruptItem = errors.New("dynamorepo: corrupt item")

func corrupt(attr, problem string) error {
	return fmt.Errorf("%w: attribute %s %s", ErrCorruptItem, attr, problem)
}

// userKey is the partition key of the user of s.
func userKey(s memory.Scope) string { return s.TenantID + "#" + s.UserID }

func keyOf(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{KeyAttribute: &types.AttributeValueMemberS{Value: pk}}
}

func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// ceilMilli returns t in unix milliseconds, rounded up.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

// factValue is the stored form of f: {v, t, s}.
func factValue(f memory.Fact) types.AttributeValue {
	m := map[string]types.AttributeValue{
		attrValue:     str(f.Value),
		attrUpdatedAt: num(f.UpdatedAt.UnixMilli()),
	}
	if f.SourceThreadID != "" {
		m[attrSource] = str(f.SourceThreadID)
	}
	return &types.AttributeValueMemberM{Value: m}
}

// encodeRecord returns the item of rec under the key pk with version ver.
// It refuses an empty fact key or thread ID: DynamoDB rejects an empty
// attribute name.
func encodeRecord(pk string, rec memory.Record, ver string) (map[string]types.AttributeValue, error) {
	facts := make(map[string]types.AttributeValue, len(rec.Facts))
	for _, f := range rec.Facts {
		if f.Key == "" {
			return nil, errors.New("dynamorepo: a fact with an empty key cannot be stored")
		}
		facts[f.Key] = factValue(f)
	}
	it := map[string]types.AttributeValue{
		KeyAttribute: str(pk),
		attrVersion:  str(ver),
		attrFacts:    &types.AttributeValueMemberM{Value: facts},
	}
	if len(rec.Threads) > 0 {
		threads := make(map[string]types.AttributeValue, len(rec.Threads))
		for id, m := range rec.Threads {
			if id == "" {
				return nil, errors.New("dynamorepo: a thread watermark with an empty thread ID cannot be stored")
			}
			threads[id] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				attrTurnCount: num(int64(m.TurnCount)),
				attrUpdatedAt: num(m.At.UnixMilli()),
			}}
		}
		it[attrThreads] = &types.AttributeValueMemberM{Value: threads}
	}
	removed := make(map[string]types.AttributeValue, len(rec.Tombstones))
	for key, at := range rec.Tombstones {
		if key == "" {
			return nil, errors.New("dynamorepo: a tombstone with an empty key cannot be stored")
		}
		removed[key] = num(ceilMilli(at))
	}
	it[attrRemoved] = &types.AttributeValueMemberM{Value: removed}
	if !rec.ErasedAt.IsZero() {
		it[attrErasedAt] = num(ceilMilli(rec.ErasedAt))
	}
	if !rec.ClearedAt.IsZero() {
		it[attrCleared] = num(ceilMilli(rec.ClearedAt))
	}
	return it, nil
}

// decodeRecord returns the record of an item: a zero Record for no item, a
// record without facts (nil Facts) for a fence.
func decodeRecord(it map[string]types.AttributeValue) (memory.Record, error) {
	if len(it) == 0 {
		return memory.Record{}, nil
	}
	var rec memory.Record
	var err error
	if rec.Version, err = getString(it, attrVersion, attrVersion); err != nil {
		return memory.Record{}, err
	}
	if rec.Version == "" {
		return memory.Record{}, corrupt(attrVersion, "is empty")
	}
	if av, ok := it[attrErasedAt]; ok {
		ms, err := numberOf(av, attrErasedAt)
		if err != nil {
			return memory.Record{}, err
		}
		rec.ErasedAt = time.UnixMilli(ms).UTC()
	}
	if av, ok := it[attrCleared]; ok {
		ms, err := numberOf(av, attrCleared)
		if err != nil {
			return memory.Record{}, err
		}
		rec.ClearedAt = time.UnixMilli(ms).UTC()
	}
	if av, ok := it[attrRemoved]; ok {
		if rec.Tombstones, err = decodeTombstones(av); err != nil {
			return memory.Record{}, err
		}
	}
	if av, ok := it[attrFacts]; ok {
		if rec.Facts, err = decodeFacts(av); err != nil {
			return memory.Record{}, err
		}
	}
	if av, ok := it[attrThreads]; ok {
		if rec.Threads, err = decodeThreads(av); err != nil {
			return memory.Record{}, err
		}
	}
	return rec, nil
}

func decodeFacts(av types.AttributeValue) ([]memory.Fact, error) {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, corrupt(attrFacts, "is not a map")
	}
	facts := make([]memory.Fact, 0, len(m.Value))
	for key, fv := range m.Value {
		fm, ok := fv.(*types.AttributeValueMemberM)
		if !ok {
			return nil, corrupt(attrFacts+" entry", "is not a map")
		}
		f := memory.Fact{Key: key}
		var err error
		if f.Value, err = getString(fm.Value, attrValue, attrFacts+" entry "+attrValue); err != nil {
			return nil, err
		}
		ms, err := getNumber(fm.Value, attrUpdatedAt, attrFacts+" entry "+attrUpdatedAt)
		if err != nil {
			return nil, err
		}
		f.UpdatedAt = time.UnixMilli(ms).UTC()
		if _, ok := fm.Value[attrSource]; ok {
			if f.SourceThreadID, err = getString(fm.Value, attrSource, attrFacts+" entry "+attrSource); err != nil {
				return nil, err
			}
		}
		facts = append(facts, f)
	}
	sort.Slice(facts, func(i, j int) bool { return facts[i].Key < facts[j].Key })
	return facts, nil
}

func decodeTombstones(av types.AttributeValue) (map[string]time.Time, error) {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, corrupt(attrRemoved, "is not a map")
	}
	out := make(map[string]time.Time, len(m.Value))
	for key, tv := range m.Value {
		ms, err := numberOf(tv, attrRemoved+" entry")
		if err != nil {
			return nil, err
		}
		out[key] = time.UnixMilli(ms).UTC()
	}
	return out, nil
}

func decodeThreads(av types.AttributeValue) (map[string]memory.ThreadMark, error) {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, corrupt(attrThreads, "is not a map")
	}
	out := make(map[string]memory.ThreadMark, len(m.Value))
	for id, tv := range m.Value {
		tm, ok := tv.(*types.AttributeValueMemberM)
		if !ok {
			return nil, corrupt(attrThreads+" entry", "is not a map")
		}
		n, err := getNumber(tm.Value, attrTurnCount, attrThreads+" entry "+attrTurnCount)
		if err != nil {
			return nil, err
		}
		ms, err := getNumber(tm.Value, attrUpdatedAt, attrThreads+" entry "+attrUpdatedAt)
		if err != nil {
			return nil, err
		}
		out[id] = memory.ThreadMark{TurnCount: int(n), At: time.UnixMilli(ms).UTC()}
	}
	return out, nil
}

// getString returns the string attribute name of m; path names it in
// errors.
func getString(m map[string]types.AttributeValue, name, path string) (string, error) {
	av, ok := m[name]
	if !ok {
		return "", corrupt(path, "is missing")
	}
	s, ok := av.(*types.AttributeValueMemberS)
	if !ok {
		return "", corrupt(path, "is not a string")
	}
	return s.Value, nil
}

// getNumber returns the integer attribute name of m; path names it in
// errors.
func getNumber(m map[string]types.AttributeValue, name, path string) (int64, error) {
	av, ok := m[name]
	if !ok {
		return 0, corrupt(path, "is missing")
	}
	return numberOf(av, path)
}

func numberOf(av types.AttributeValue, path string) (int64, error) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, corrupt(path, "is not a number")
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, corrupt(path, "is not an integer")
	}
	return v, nil
}

// countFacts returns the number of facts of an item, 0 when it has no facts
// map.
func countFacts(it map[string]types.AttributeValue) int {
	if m, ok := it[attrFacts].(*types.AttributeValueMemberM); ok {
		return len(m.Value)
	}
	return 0
}

// itemSize returns the size of an item by DynamoDB's rules: the UTF-8 bytes
// of every attribute name and string, the bytes of binaries, 1 byte for a
// boolean or null, about one byte per two significant digits plus one for a
// number, and 3 bytes for a map or list plus, for each element, 1 byte and
// the element's name and size. Numbers are rounded up, so the result is an
// upper bound.
func itemSize(it map[string]types.AttributeValue) int {
	n := 0
	for name, av := range it {
		n += len(name) + valueSize(av)
	}
	return n
}

func valueSize(av types.AttributeValue) int {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	}
	return 0
}

// numberSize is the stored size of a number: one byte per two significant
// digits, rounded up, plus one.
func numberSize(s string) int {
	digits := strings.TrimLeft(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.SplitN(strings.ToLower(s), "e", 2)[0]), "0")
	digits = strings.TrimRight(digits, "0")
	return (len(digits)+1)/2 + 1
}

// checkSize returns an error wrapping ErrItemTooLarge when it is over
// MaxItemBytes.
func checkSize(it map[string]types.AttributeValue) error {
	if n := itemSize(it); n > MaxItemBytes {
		return fmt.Errorf("%w: the item would be %d bytes, over %d; not sent", ErrItemTooLarge, n, MaxItemBytes)
	}
	return nil
}
