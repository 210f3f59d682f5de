package dynamorepo

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/memory"
)

// Attribute names of a user's item, besides [KeyAttribute] and
// [TTLAttribute], for the expressions; the tags of [item] repeat them.
const (
	attrFacts    = "facts"
	attrVersion  = "ver"
	attrThreads  = "threads"
	attrErasedAt = "erasedAt"
	attrRemoved  = "removed"
	attrCleared  = "clearedAt"
	attrPending  = "pending"
	attrEnds     = "endsAt"
	attrTails    = "tails"
	attrImports  = "imports"
	attrDeclined = "declined"
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

// item is the stored form of a user's record (see the package doc), as
// attributevalue encodes and decodes it; the key is added apart. The types
// text and integer refuse an attribute of another type, which
// attributevalue would convert (a number into a string) or decode as a
// zero (NULL); decodeRecord checks what no type can: a missing version or
// entry field.
type item struct {
	Version   text                `dynamodbav:"ver"`
	Facts     map[string]factItem `dynamodbav:"facts"`
	Threads   map[string]mark     `dynamodbav:"threads,omitempty"`
	Removed   map[string]integer  `dynamodbav:"removed"`
	ErasedAt  integer             `dynamodbav:"erasedAt,omitempty"`
	ClearedAt integer             `dynamodbav:"clearedAt,omitempty"`
	Pending   map[string]factItem `dynamodbav:"pending"`
	Ends      integer             `dynamodbav:"endsAt,omitempty"`
	// Tails are the unread tails (memory.Record.Tails), each stored as a
	// counted watermark: "<turn count>:<unix ms of the message's send>".
	Tails map[string]mark `dynamodbav:"tails,omitempty"`
	// Imports are the marks of the newest imports, newest first
	// (memory.Record.Imports).
	Imports []importItem `dynamodbav:"imports,omitempty"`
	// Declined maps the digest of a declined imported fact to when it was
	// declined, unix ms (memory.Record.Declined).
	Declined map[string]integer `dynamodbav:"declined,omitempty"`
}

// importItem is a stored import mark (memory.ImportMark): its ID, source,
// request and done times (unix ms), status, reason, parts, statements,
// proposed facts,
// and the counts of what it left out, "secrets,instructions,unsupported,
// ended,known,declined,deletes,skipped,overCap,noRoom", omitted when all
// are 0 (marks stored before the last three have the first seven:
// [leftOutCountsBefore]).
type importItem struct {
	ID        *text   `dynamodbav:"i"`
	Source    text    `dynamodbav:"s,omitempty"`
	Requested integer `dynamodbav:"r,omitempty"`
	Done      integer `dynamodbav:"d,omitempty"`
	Status    *text   `dynamodbav:"st"`
	Reason    text    `dynamodbav:"why,omitempty"`
	Parts     integer `dynamodbav:"p,omitempty"`
	Stmts     integer `dynamodbav:"m,omitempty"`
	Proposed  integer `dynamodbav:"n,omitempty"`
	LeftOut   text    `dynamodbav:"l,omitempty"`
}

// importValue returns the stored form of m.
func importValue(m memory.ImportMark) importItem {
	it := importItem{ID: ptr(text(m.ID)), Source: text(m.Source), Status: ptr(text(m.Status)), Reason: text(m.Reason),
		Parts: integer(m.Parts), Stmts: integer(m.Statements), Proposed: integer(m.Proposed)}
	if !m.RequestedAt.IsZero() {
		it.Requested = integer(m.RequestedAt.UnixMilli())
	}
	if !m.DoneAt.IsZero() {
		it.Done = integer(m.DoneAt.UnixMilli())
	}
	l := m.LeftOut
	if l != (memory.ImportLeftOut{}) {
		counts := []int{l.Secrets, l.Instructions, l.Unsupported, l.Ended, l.Known, l.Declined, l.Deletes, l.Skipped, l.OverCap, l.NoRoom}
		parts := make([]string, len(counts))
		for i, n := range counts {
			parts[i] = strconv.Itoa(n)
		}
		it.LeftOut = text(strings.Join(parts, ","))
	}
	return it
}

// leftOutCountsBefore is the number of left-out counts of a mark stored
// before Skipped, OverCap and NoRoom were counted; it still reads, with
// those 0.
const leftOutCountsBefore = 7

// mark returns the import mark stored as it, or an error for an entry
// without its ID or status, or with counts not of its form.
func (it importItem) mark() (memory.ImportMark, error) {
	if it.ID == nil || it.Status == nil {
		return memory.ImportMark{}, corrupt(attrImports, "holds an entry without i or st")
	}
	m := memory.ImportMark{ID: string(*it.ID), Source: string(it.Source), Status: memory.ImportStatus(*it.Status),
		Reason: string(it.Reason), Parts: int(it.Parts), Statements: int(it.Stmts), Proposed: int(it.Proposed)}
	if it.Requested != 0 {
		m.RequestedAt = it.Requested.time()
	}
	if it.Done != 0 {
		m.DoneAt = it.Done.time()
	}
	if it.LeftOut == "" {
		return m, nil
	}
	fields := strings.Split(string(it.LeftOut), ",")
	l := &m.LeftOut
	dst := []*int{&l.Secrets, &l.Instructions, &l.Unsupported, &l.Ended, &l.Known, &l.Declined, &l.Deletes, &l.Skipped, &l.OverCap, &l.NoRoom}
	if len(fields) != len(dst) && len(fields) != leftOutCountsBefore {
		return memory.ImportMark{}, corrupt(attrImports, "holds counts that are not 7 or 10 numbers")
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return memory.ImportMark{}, corrupt(attrImports, "holds counts that are not 7 or 10 numbers")
		}
		*dst[i] = n
	}
	return m, nil
}

// factItem is a stored fact; t, u and a (when it was said) are unix
// milliseconds.
type factItem struct {
	Value     *text    `dynamodbav:"v"`
	UpdatedAt *integer `dynamodbav:"t"`
	Origin    text     `dynamodbav:"o,omitempty"`
	Source    text     `dynamodbav:"s,omitempty"`
	Title     text     `dynamodbav:"n,omitempty"`
	Evidence  text     `dynamodbav:"e,omitempty"`
	Until     integer  `dynamodbav:"u,omitempty"`
	Category  text     `dynamodbav:"c,omitempty"`
	SaidAt    integer  `dynamodbav:"a,omitempty"`
	// Replaced is 1 when the fact's setting replaced another value
	// (memory.Fact.Replaced), absent otherwise.
	Replaced integer `dynamodbav:"r,omitempty"`
	// History are the fact's previous values, newest first
	// (memory.Record.History): a list that goes with the fact, so that
	// removing the fact removes it.
	History []prevItem `dynamodbav:"h,omitempty"`
}

// prevItem is a stored previous value (memory.PreviousValue): the value,
// when it was replaced (t, unix ms), and the change that replaced it: its
// origin (stored only when not the derived one, as for a fact), thread,
// title and evidence; p is the thread that taught the value, and w the
// value's own provenance ([wasItem]). An entry stored before w was kept
// has none: its provenance is not known.
type prevItem struct {
	Value      *text    `dynamodbav:"v"`
	ReplacedAt *integer `dynamodbav:"t"`
	Origin     text     `dynamodbav:"o,omitempty"`
	Source     text     `dynamodbav:"s,omitempty"`
	Title      text     `dynamodbav:"n,omitempty"`
	Evidence   text     `dynamodbav:"e,omitempty"`
	Taught     text     `dynamodbav:"p,omitempty"`
	Was        *wasItem `dynamodbav:"w,omitempty"`
}

// wasItem is the provenance of a stored previous value's value, as the
// fact that held it was stored (memory.PreviousValue's Value fields):
// origin (always), title, evidence, updated (unix ms), said and until
// (unix ms, when set), category, and r 1 when it replaced another value.
// Its thread is the previous value's p.
type wasItem struct {
	Origin    text    `dynamodbav:"o"`
	Title     text    `dynamodbav:"n,omitempty"`
	Evidence  text    `dynamodbav:"e,omitempty"`
	UpdatedAt integer `dynamodbav:"t"`
	SaidAt    integer `dynamodbav:"a,omitempty"`
	Until     integer `dynamodbav:"u,omitempty"`
	Category  text    `dynamodbav:"c,omitempty"`
	Replaced  integer `dynamodbav:"r,omitempty"`
}

// prevValue returns the stored form of p.
func prevValue(p memory.PreviousValue) prevItem {
	it := prevItem{Value: ptr(text(p.Value)), ReplacedAt: ptr(integer(p.ReplacedAt.UnixMilli())), Source: text(p.ThreadID),
		Title: text(p.ThreadTitle), Evidence: text(p.Evidence), Taught: text(p.ValueThreadID)}
	if p.Origin != (factItem{Source: it.Source}).derivedOrigin() {
		it.Origin = text(p.Origin)
	}
	if p.ValueOrigin != "" {
		it.Was = &wasItem{Origin: text(p.ValueOrigin), Title: text(p.ValueThreadTitle), Evidence: text(p.ValueEvidence),
			UpdatedAt: integer(p.ValueUpdatedAt.UnixMilli()), Category: text(p.ValueCategory)}
		if !p.ValueSaidAt.IsZero() {
			it.Was.SaidAt = integer(p.ValueSaidAt.UnixMilli())
		}
		if !p.ValueValidUntil.IsZero() {
			it.Was.Until = integer(p.ValueValidUntil.UnixMilli())
		}
		if p.ValueReplaced {
			it.Was.Replaced = 1
		}
	}
	return it
}

// previous returns the previous value stored as p, or an error for an
// entry without v or t.
func (p prevItem) previous() (memory.PreviousValue, error) {
	if p.Value == nil || p.ReplacedAt == nil {
		return memory.PreviousValue{}, corrupt(attrFacts, "holds a previous value without v or t")
	}
	origin := memory.Origin(p.Origin)
	if origin == "" {
		origin = (factItem{Source: p.Source}).derivedOrigin()
	}
	prev := memory.PreviousValue{Value: string(*p.Value), ReplacedAt: p.ReplacedAt.time(), Origin: origin,
		ThreadID: string(p.Source), ThreadTitle: string(p.Title), Evidence: string(p.Evidence), ValueThreadID: string(p.Taught)}
	if w := p.Was; w != nil {
		if w.Origin == "" {
			return memory.PreviousValue{}, corrupt(attrFacts, "holds a previous value's provenance without o")
		}
		prev.ValueOrigin, prev.ValueThreadTitle, prev.ValueEvidence = memory.Origin(w.Origin), string(w.Title), string(w.Evidence)
		prev.ValueUpdatedAt, prev.ValueCategory, prev.ValueReplaced = w.UpdatedAt.time(), string(w.Category), w.Replaced != 0
		if w.SaidAt != 0 {
			prev.ValueSaidAt = w.SaidAt.time()
		}
		if w.Until != 0 {
			prev.ValueValidUntil = w.Until.time()
		}
	}
	return prev, nil
}

// withHistory sets, in the stored facts m, the history of every fact held
// that has one.
func withHistory(m map[string]factItem, hist map[string][]memory.PreviousValue) {
	for k, h := range hist {
		it, ok := m[k]
		if !ok || len(h) == 0 {
			continue
		}
		it.History = make([]prevItem, len(h))
		for i, p := range h {
			it.History[i] = prevValue(p)
		}
		m[k] = it
	}
}

// historyOf returns the histories of the stored facts m, nil when none
// has one.
func historyOf(m map[string]factItem) (map[string][]memory.PreviousValue, error) {
	var out map[string][]memory.PreviousValue
	for k, f := range m {
		if len(f.History) == 0 {
			continue
		}
		h := make([]memory.PreviousValue, len(f.History))
		for i, p := range f.History {
			var err error
			if h[i], err = p.previous(); err != nil {
				return nil, err
			}
		}
		if out == nil {
			out = map[string][]memory.PreviousValue{}
		}
		out[k] = h
	}
	return out, nil
}

// mark is a stored thread watermark: the string "<turn count>:<unix ms>"
// (its size: docs/decisions.md, the part sizes, measured by
// TestStorageFiguresInTheDocs); or, for an uncounted
// extraction, "<digest>:<unix ms>", the digest being memory.TurnsDigest
// ("#" and 12 characters, so never a number: TestDigestMarks measures
// it). Items written before it held a map {n: turn count, t: unix ms}, 17
// bytes with the same figures; they still read, and the next Save of the
// whole record writes the string.
//
// A thread whose facts the user forgot (memory.ThreadMark.ForgottenAt)
// has a third part, ":<unix ms of the forget>"; no other mark has one.
type mark struct {
	TurnCount int64
	Digest    string // set for an uncounted extraction; TurnCount is then 0
	At        int64
	Forgotten int64 // unix ms of the thread's forget fence; 0 when none
}

// String returns the stored form of m.
func (m mark) String() string {
	head := strconv.FormatInt(m.TurnCount, 10)
	if m.Digest != "" {
		head = m.Digest
	}
	s := head + ":" + strconv.FormatInt(m.At, 10)
	if m.Forgotten != 0 {
		s += ":" + strconv.FormatInt(m.Forgotten, 10)
	}
	return s
}

// MarshalDynamoDBAttributeValue returns the string form of m.
func (m mark) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return str(m.String()), nil
}

// UnmarshalDynamoDBAttributeValue sets m from its string form, or from the
// map form of older items, and refuses anything else.
func (m *mark) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		bad := fmt.Errorf("holds the watermark %q, not <turn count or digest>:<unix ms>[:<unix ms>]", v.Value)
		n, t, ok := strings.Cut(v.Value, ":")
		t, f, forgot := strings.Cut(t, ":")
		at, err := strconv.ParseInt(t, 10, 64)
		if !ok || err != nil || strings.HasPrefix(t, "+") {
			return bad
		}
		var forgotten int64
		if forgot {
			forgotten, err = strconv.ParseInt(f, 10, 64)
			if err != nil || forgotten <= 0 || strings.HasPrefix(f, "+") {
				return bad
			}
		}
		if memory.IsTurnsDigest(n) {
			*m = mark{Digest: n, At: at, Forgotten: forgotten}
			return nil
		}
		turns, err := strconv.ParseInt(n, 10, 64)
		if err != nil || turns < 0 || strings.HasPrefix(n, "+") {
			return bad
		}
		*m = mark{TurnCount: turns, At: at, Forgotten: forgotten}
		return nil
	case *types.AttributeValueMemberM:
		var old struct {
			TurnCount *integer `dynamodbav:"n"`
			At        *integer `dynamodbav:"t"`
		}
		if err := attributevalue.Unmarshal(v, &old); err != nil {
			return err
		}
		if old.TurnCount == nil || old.At == nil {
			return errors.New("holds an entry without n or t")
		}
		*m = mark{TurnCount: int64(*old.TurnCount), At: int64(*old.At)}
		return nil
	}
	return errors.New("holds a watermark that is neither a string nor a map")
}

// later reports whether m wins over o when two watermarks fall on one key:
// of two turn counts, the higher, then the later time; else (a digest
// does not compare with a count or another digest) the later time, then
// the greater stored form, so that the winner never depends on an order.
func (m mark) later(o mark) bool {
	if m.Digest == "" && o.Digest == "" {
		return m.TurnCount > o.TurnCount || m.TurnCount == o.TurnCount && m.At > o.At
	}
	return m.At > o.At || m.At == o.At && m.String() > o.String()
}

// addMark sets threads[key] to m unless the key holds a watermark m does
// not win over.
func addMark(threads map[string]mark, key string, m mark) {
	if o, ok := threads[key]; !ok || m.later(o) {
		threads[key] = m
	}
}

// text is a string attribute.
type text string

// UnmarshalDynamoDBAttributeValue sets t from a string attribute and
// refuses any other.
func (t *text) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	s, ok := av.(*types.AttributeValueMemberS)
	if !ok {
		return errors.New("holds a value that is not a string")
	}
	*t = text(s.Value)
	return nil
}

// integer is a number attribute that holds an integer.
type integer int64

// UnmarshalDynamoDBAttributeValue sets n from a number attribute that
// holds an integer and refuses any other.
func (n *integer) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	v, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return errors.New("holds a value that is not a number")
	}
	i, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return errors.New("holds a number that is not an integer")
	}
	*n = integer(i)
	return nil
}

func (n integer) time() time.Time { return time.UnixMilli(int64(n)).UTC() }

func ptr[T any](v T) *T { return &v }

// factValue is the stored form of f: {v, t, o, s, n, e, u, c, a}. The
// origin is stored only when it is not the one [factItem.fact] derives
// from the source thread (conversation with one, manual without), so that
// the common facts cost no bytes for it; the evidence, the end date, the
// category and the time it was said only when the fact has one.
func factValue(f memory.Fact) factItem {
	it := factItem{Value: ptr(text(f.Value)), UpdatedAt: ptr(integer(f.UpdatedAt.UnixMilli())),
		Source: text(f.SourceThreadID), Title: text(f.SourceThreadTitle),
		Evidence: text(f.Evidence), Category: text(f.Category)}
	if !f.ValidUntil.IsZero() {
		it.Until = integer(f.ValidUntil.UnixMilli())
	}
	if !f.SaidAt.IsZero() {
		it.SaidAt = integer(f.SaidAt.UnixMilli())
	}
	if f.Replaced {
		it.Replaced = 1
	}
	if f.Origin != it.derivedOrigin() {
		it.Origin = text(f.Origin)
	}
	return it
}

// derivedOrigin is the origin of a fact stored without one: from a
// conversation when it has a source thread, else set by hand.
func (f factItem) derivedOrigin() memory.Origin {
	if f.Source != "" {
		return memory.OriginConversation
	}
	return memory.OriginManual
}

// fact returns the fact stored as f under key. A fact stored without an
// origin (written before origins were stored, or whose origin is the
// derived one) has [factItem.derivedOrigin].
func (f factItem) fact(key string) memory.Fact {
	origin := memory.Origin(f.Origin)
	if origin == "" {
		origin = f.derivedOrigin()
	}
	fact := memory.Fact{Key: key, Value: string(*f.Value), UpdatedAt: f.UpdatedAt.time(), Origin: origin,
		SourceThreadID: string(f.Source), SourceThreadTitle: string(f.Title),
		Evidence: string(f.Evidence), Category: string(f.Category), Replaced: f.Replaced != 0}
	if f.Until != 0 {
		fact.ValidUntil = f.Until.time()
	}
	if f.SaidAt != 0 {
		fact.SaidAt = f.SaidAt.time()
	}
	return fact
}

// factMap returns the stored form of facts, a map keyed by fact key; what
// names the list in the error of an empty key.
func factMap(facts []memory.Fact, what string) (map[string]factItem, error) {
	m := make(map[string]factItem, len(facts))
	for _, f := range facts {
		if f.Key == "" {
			return nil, fmt.Errorf("dynamorepo: a %s with an empty key cannot be stored", what)
		}
		m[f.Key] = factValue(f)
	}
	return m, nil
}

// factList returns the facts of a stored map, sorted by key; attr names
// the map in the error of an entry without v or t.
func factList(m map[string]factItem, attr string) ([]memory.Fact, error) {
	facts := make([]memory.Fact, 0, len(m))
	for k, f := range m {
		if f.Value == nil || f.UpdatedAt == nil {
			return nil, corrupt(attr, "holds an entry without v or t")
		}
		facts = append(facts, f.fact(k))
	}
	sort.Slice(facts, func(i, j int) bool { return facts[i].Key < facts[j].Key })
	return facts, nil
}

// encodeRecord returns the item of rec under the key pk with version ver.
// A watermark is stored under [memory.ThreadKey] of its key (the key
// itself when the core made it). Expires is stored rounded down to the
// millisecond, so that the conditions of SetFact and DeleteFact never let
// a write through after it. It refuses an empty fact key or thread ID:
// DynamoDB rejects an empty attribute name.
func encodeRecord(pk string, rec memory.Record, ver string) (map[string]types.AttributeValue, error) {
	it := item{Version: text(ver), Removed: make(map[string]integer, len(rec.Tombstones))}
	var err error
	if it.Facts, err = factMap(rec.Facts, "fact"); err != nil {
		return nil, err
	}
	withHistory(it.Facts, rec.History)
	if it.Pending, err = factMap(rec.Pending, "pending fact"); err != nil {
		return nil, err
	}
	if !rec.Expires.IsZero() {
		it.Ends = integer(rec.Expires.UnixMilli())
	}
	if len(rec.Threads) > 0 {
		it.Threads = make(map[string]mark, len(rec.Threads))
	}
	for id, m := range rec.Threads {
		if id == "" {
			return nil, errors.New("dynamorepo: a thread watermark with an empty thread ID cannot be stored")
		}
		if m.Digest != "" && !memory.IsTurnsDigest(m.Digest) {
			return nil, errors.New("dynamorepo: a thread watermark whose digest is not memory.TurnsDigest's cannot be stored")
		}
		addMark(it.Threads, memory.ThreadKey(id), threadMark(m))
	}
	if len(rec.Tails) > 0 {
		it.Tails = make(map[string]mark, len(rec.Tails))
	}
	for key, t := range rec.Tails {
		if key == "" {
			return nil, errors.New("dynamorepo: an unread tail with an empty thread key cannot be stored")
		}
		addMark(it.Tails, memory.ThreadKey(key), mark{TurnCount: int64(t.TurnCount), At: t.SentAt.UnixMilli()})
	}
	for key, at := range rec.Tombstones {
		if key == "" {
			return nil, errors.New("dynamorepo: a tombstone with an empty key cannot be stored")
		}
		it.Removed[key] = integer(ceilMilli(at))
	}
	if !rec.ErasedAt.IsZero() {
		it.ErasedAt = integer(ceilMilli(rec.ErasedAt))
	}
	if !rec.ClearedAt.IsZero() {
		it.ClearedAt = integer(ceilMilli(rec.ClearedAt))
	}
	if err := encodeImports(&it, rec); err != nil {
		return nil, err
	}
	m, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, fmt.Errorf("dynamorepo: encode record: %w", err)
	}
	m[KeyAttribute] = str(pk)
	return m, nil
}

// encodeImports sets in it the import marks and the declined digests of
// rec. It refuses a mark without an ID and an empty digest: DynamoDB
// rejects an empty attribute name.
func encodeImports(it *item, rec memory.Record) error {
	for _, m := range rec.Imports {
		if m.ID == "" {
			return errors.New("dynamorepo: an import mark without an ID cannot be stored")
		}
		it.Imports = append(it.Imports, importValue(m))
	}
	if len(rec.Declined) > 0 {
		it.Declined = make(map[string]integer, len(rec.Declined))
	}
	for d, at := range rec.Declined {
		if d == "" {
			return errors.New("dynamorepo: an empty declined digest cannot be stored")
		}
		it.Declined[d] = integer(at.UnixMilli())
	}
	return nil
}

// decodeImports sets in rec the import marks and the declined digests of
// it.
func decodeImports(rec *memory.Record, it item) error {
	for _, im := range it.Imports {
		m, err := im.mark()
		if err != nil {
			return err
		}
		rec.Imports = append(rec.Imports, m)
	}
	if len(it.Declined) > 0 {
		rec.Declined = make(map[string]time.Time, len(it.Declined))
		for d, at := range it.Declined {
			rec.Declined[d] = at.time()
		}
	}
	return nil
}

// decodeRecord returns the record of an item: a zero Record for no item, a
// record without facts (nil Facts) for a fence. The watermarks of an older
// item, keyed by whole thread IDs, come keyed by [memory.ThreadKey], as the
// core looks them up.
func decodeRecord(av map[string]types.AttributeValue) (memory.Record, error) {
	if len(av) == 0 {
		return memory.Record{}, nil
	}
	var it item
	// One attribute at a time, so that an error names it.
	for name, dst := range map[string]any{attrVersion: &it.Version, attrFacts: &it.Facts, attrThreads: &it.Threads,
		attrRemoved: &it.Removed, attrErasedAt: &it.ErasedAt, attrCleared: &it.ClearedAt,
		attrPending: &it.Pending, attrEnds: &it.Ends, attrTails: &it.Tails, attrImports: &it.Imports, attrDeclined: &it.Declined} {
		if v, ok := av[name]; ok {
			if err := attributevalue.Unmarshal(v, dst); err != nil {
				var te *attributevalue.UnmarshalTypeError // a map or an entry of another type
				if errors.As(err, &te) {
					return memory.Record{}, corrupt(name, "holds a "+te.Value+" where a map is expected")
				}
				return memory.Record{}, corrupt(name, err.Error())
			}
		}
	}
	if it.Version == "" {
		return memory.Record{}, corrupt(attrVersion, "is missing or empty")
	}
	rec := memory.Record{Version: string(it.Version)}
	if _, ok := av[attrErasedAt]; ok {
		rec.ErasedAt = it.ErasedAt.time()
	}
	if _, ok := av[attrCleared]; ok {
		rec.ClearedAt = it.ClearedAt.time()
	}
	if it.Removed != nil {
		rec.Tombstones = make(map[string]time.Time, len(it.Removed))
		for k, at := range it.Removed {
			rec.Tombstones[k] = at.time()
		}
	}
	if _, ok := av[attrEnds]; ok {
		rec.Expires = it.Ends.time()
	}
	var err error
	if it.Facts != nil {
		if rec.Facts, err = factList(it.Facts, attrFacts); err != nil {
			return memory.Record{}, err
		}
		if rec.History, err = historyOf(it.Facts); err != nil {
			return memory.Record{}, err
		}
	}
	if len(it.Pending) > 0 {
		if rec.Pending, err = factList(it.Pending, attrPending); err != nil {
			return memory.Record{}, err
		}
	}
	if it.Threads != nil {
		rec.Threads = threadMarks(it.Threads)
	}
	if len(it.Tails) > 0 {
		rec.Tails = make(map[string]memory.Tail, len(it.Tails))
		for key, m := range it.Tails {
			if m.Digest != "" {
				return memory.Record{}, corrupt(attrTails, "holds a digest where a turn count is expected")
			}
			rec.Tails[key] = memory.Tail{TurnCount: int(m.TurnCount), SentAt: integer(m.At).time()}
		}
	}
	if err := decodeImports(&rec, it); err != nil {
		return memory.Record{}, err
	}
	return rec, nil
}

// threadMark returns the stored form of the watermark m; a forget fence
// is kept to the millisecond, rounded up, so that it never fences less
// than the core's.
func threadMark(m memory.ThreadMark) mark {
	out := mark{TurnCount: int64(m.TurnCount), Digest: m.Digest, At: m.At.UnixMilli()}
	if !m.ForgottenAt.IsZero() {
		out.Forgotten = m.ForgottenAt.UnixMilli()
		if m.ForgottenAt.After(time.UnixMilli(out.Forgotten)) {
			out.Forgotten++
		}
	}
	return out
}

// threadMarks returns the stored watermarks keyed by [memory.ThreadKey],
// as the core looks them up: those of an older item are keyed by whole
// thread IDs.
func threadMarks(stored map[string]mark) map[string]memory.ThreadMark {
	keyed := make(map[string]mark, len(stored))
	for id, m := range stored {
		addMark(keyed, memory.ThreadKey(id), m)
	}
	marks := make(map[string]memory.ThreadMark, len(keyed))
	for key, m := range keyed {
		marks[key] = memory.ThreadMark{TurnCount: int(m.TurnCount), Digest: m.Digest, At: integer(m.At).time()}
		if m.Forgotten != 0 {
			marks[key] = memory.ThreadMark{TurnCount: int(m.TurnCount), Digest: m.Digest, At: integer(m.At).time(), ForgottenAt: integer(m.Forgotten).time()}
		}
	}
	return marks
}

// countFacts returns the number of facts of an item, 0 when it has no facts
// map.
func countFacts(it map[string]types.AttributeValue) int {
	if m, ok := it[attrFacts].(*types.AttributeValueMemberM); ok {
		return len(m.Value)
	}
	return 0
}

// ItemSize returns the size of an item by DynamoDB's rules (developer
// guide, "Item sizes and formats"): the UTF-8 bytes of every attribute name
// and string, the bytes of binaries, 1 byte for a boolean or null, one byte
// per two significant digits plus one for a number (leading and trailing
// zeros trimmed), and 3 bytes for a map or list plus, for each element, 1
// byte and the element's name and size. A write of an item over
// [MaxItemBytes] by this measure is refused before it is sent.
func ItemSize(it map[string]types.AttributeValue) int {
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
		return 3 + sizeOfAll(v.Value, func(e types.AttributeValue) int { return 1 + valueSize(e) })
	case *types.AttributeValueMemberSS:
		return sizeOfAll(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sizeOfAll(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sizeOfAll(v.Value, func(b []byte) int { return len(b) })
	}
	return 0
}

// sizeOfAll returns the sum of size over the elements of a list or set.
func sizeOfAll[E any](elems []E, size func(E) int) int {
	n := 0
	for _, e := range elems {
		n += size(e)
	}
	return n
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
	if n := ItemSize(it); n > MaxItemBytes {
		return fmt.Errorf("%w: the item would be %d bytes, over %d; not sent", ErrItemTooLarge, n, MaxItemBytes)
	}
	return nil
}
