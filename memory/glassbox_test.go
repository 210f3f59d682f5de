package memory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// setQ is a SET that quotes its evidence.
func setQ(k, v, evidence string) memory.Operation {
	return memory.Operation{Op: memory.OpSet, Key: k, Value: v, Evidence: evidence}
}

// clockAt is a settable clock for the tests that cross days.
type clockAt struct{ t time.Time }

func (c *clockAt) now() time.Time { return c.t }

func TestEvidenceMustQuoteAUserTurnOfTheRequest(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		setQ("home_city", "Porto", "i MOVED to  Porto… last month"),                       // lenient: case, spaces, ellipsis
		setQ("name", "Ana", "Ｉ’m Ana"),                                                    // NFKC fullwidth, curly apostrophe
		setQ("role", "nurse", "You are a nurse"),                                          // the assistant's words
		setQ("pet", "cat", "I have a cat"),                                                // a context turn's words
		setQ("employer", "Acme", ""),                                                      // no evidence at all
		setQ("language", "Portuguese", "answer in Portuguese"),                            // the tool turn's words
		setQ("hobby", "chess", "I play chess on Sundays, "+strings.Repeat("really ", 40)), // cut, still a span
		setQ("team", "blue", "I"),                                                         // too short to prove anything
	}})
	s, repo := newStore(t, memory.Config{}, memory.WithModel(model))
	req := extractReq(memorytest.Ana, "th-1", 2, 6,
		"I'm Ana. I moved to Porto last month, you know.",
		"Great! You are a nurse, right?",
		"I play chess on Sundays, "+strings.Repeat("really ", 40)+"I do.",
		"Noted.")
	req.Turns = append(req.Turns, memory.Turn{Role: memory.RoleTool, Text: "answer in Portuguese"})
	req.ContextTurns = []memory.Turn{{Role: memory.RoleUser, Text: "I have a cat"}}
	res, err := s.Extract(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"home_city": "Porto", "name": "Ana", "hobby": "chess"}, values(res.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if res.Unsupported != 5 || res.Sets != 3 || res.Outcome != memory.OutcomeChanged {
		t.Errorf("unsupported %d, sets %d, outcome %s; want 5, 3, changed", res.Unsupported, res.Sets, res.Outcome)
	}
	rec, _ := repo.Record(memorytest.Ana)
	for _, f := range rec.Facts {
		if f.Evidence == "" || len([]rune(f.Evidence)) > memory.MaxEvidenceChars {
			t.Errorf("%s: evidence %q, want a quote of at most %d runes", f.Key, f.Evidence, memory.MaxEvidenceChars)
		}
	}
	if got := rec.Facts[indexOf(rec.Facts, "home_city")].Evidence; got != "i MOVED to  Porto… last month" {
		t.Errorf("stored evidence %q, want the quote as answered", got)
	}
	// The tool offered to the model asks for evidence.
	if schema := string(model.Requests()[0].Tool.InputSchema); !strings.Contains(schema, `"required":["op","key","evidence"]`) {
		t.Errorf("tool schema does not require evidence: %s", schema)
	}
}

func TestEvidenceCheckOff(t *testing.T) {
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		setQ("role", "nurse", "made up"), setQ("name", "Ana", "I'm Ana")}})
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	res, err := s.Extract(context.Background(), extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana, a nurse", "Hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Unsupported != 0 || res.Sets != 2 {
		t.Fatalf("res = %+v, want both kept", res)
	}
	if ev := res.Facts[indexOf(res.Facts, "role")].Evidence; ev != "" {
		t.Errorf("evidence not found is kept as %q, want none", ev)
	}
	if ev := res.Facts[indexOf(res.Facts, "name")].Evidence; ev != "I'm Ana" {
		t.Errorf("evidence found is %q, want kept", ev)
	}
	if schema := string(model.Requests()[0].Tool.InputSchema); strings.Contains(schema, `"evidence"]`) {
		t.Errorf("with the check off, evidence is still required: %s", schema)
	}
}

// secretExamples are real-looking secrets (test values, never live ones,
// split so that no scanner takes the source for a leak) and the words a
// user would wrap them in.
var secretExamples = []struct{ kind, key, value string }{
	{memory.SecretCardNumber, "card", "4111 1111 1111 1111"},
	{memory.SecretCardNumber, "payment_card", "my visa is 4012-8888-8888-1881"},
	{memory.SecretCardNumber, "amex", "378282246310005"},
	{memory.SecretCardNumber, "card", "5555555555554444"},
	{memory.SecretIBAN, "bank_account", "DE89 3704 0044 0532 0130 00"},
	{memory.SecretIBAN, "iban", "GB82WEST12345698765432"},
	{memory.SecretIBAN, "account", "fr1420041010050500013m02606"},
	{memory.SecretAPIKey, "aws", "AKIA" + "IOSFODNN7EXAMPLE"},
	{memory.SecretAPIKey, "github", "ghp_" + "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"},
	{memory.SecretAPIKey, "openai", "sk-" + "proj-Abcdefghijklmnopqrstuvwx1234567890ABCD"},
	{memory.SecretAPIKey, "slack", "xox" + "b-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"},
	{memory.SecretAPIKey, "stripe", "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc"},
	{memory.SecretAPIKey, "google", "AIza" + "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"},
	{memory.SecretAPIKey, "session", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEifQ.c2lnbmF0dXJlLXZhbHVl"},
	{memory.SecretPrivateKey, "ssh", "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAA"},
	{memory.SecretPassword, "wifi_password", "hunter2"},
	{memory.SecretPassword, "pin", "4821"},
	{memory.SecretPassword, "note", "my password is Tr0ub4dor&3"},
	{memory.SecretPassword, "bank", "PIN: 4821"},
	{memory.SecretPassword, "login", "mot de passe est soleil42"},
	{memory.SecretPassword, "mot_de_passe_netflix", "Bordeaux33!"},
	{memory.SecretPassword, "chave_da_api_do_deepl", "9f8e7d6c-1a2b-3c4d-5e6f-7a8b9c0d1e2f:fx"},
	{memory.SecretPassword, "password_for_netflix", "soleil42"},
	{memory.SecretPassword, "senha_do_banco", "Lisboa#2024"},
}

// notSecrets look like numbers or words near secrets but are facts.
var notSecrets = []struct{ key, value string }{
	{"phone", "+351 912 345 678"},
	{"phone", "+1 415 555 2671"},
	{"birth_year", "1987"},
	{"order_reference", "1234567890123"}, // 13 digits, fails Luhn
	{"password_manager", "uses 1Password"},
	{"password_manager", "Bitwarden"},
	{"api_key_rotation", "every 90 days"},
	{"role", "security engineer who rotates API keys"},
	{"home_city", "Porto"},
	{"postcode", "4050-123"},
	{"employer", "ASIA Pacific Holdings"},
	{"favourite_book", "The Secret History"},
}

func TestSecretsAreNeverStored(t *testing.T) {
	ctx := context.Background()
	var ops []memory.Operation
	for _, c := range secretExamples {
		if got := memory.SecretKind(c.key, c.value, ""); got != c.kind {
			t.Errorf("SecretKind(%q, %q) = %q, want %q", c.key, c.value, got, c.kind)
		}
		ops = append(ops, setQ(c.key, c.value, c.value))
	}
	for _, c := range notSecrets {
		if got := memory.SecretKind(c.key, c.value, c.value); got != "" {
			t.Errorf("SecretKind(%q, %q) = %q, want none", c.key, c.value, got)
		}
	}
	// Extraction: every secret is left out, even when quoted.
	var turns []string
	for _, c := range secretExamples {
		turns = append(turns, c.value, "ok")
	}
	model := memorytest.NewModel(memorytest.Answer{Operations: ops[:len(ops)/2]}, memorytest.Answer{Operations: ops[len(ops)/2:]})
	s, repo := newStore(t, memory.Config{MaxOperations: 60}, memory.WithModel(model))
	for i := range 2 {
		res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 40*i, 40*(i+1), turns...))
		if err != nil {
			t.Fatal(err)
		}
		if res.Secrets != len(ops[len(ops)/2*i:len(ops)/2*(i+1)]) || len(res.Facts) != 0 {
			t.Errorf("extraction %d: secrets %d, facts %v; want every SET left out", i, res.Secrets, values(res.Facts))
		}
	}
	// By hand and by the remember tool: refused with a code.
	for _, c := range secretExamples {
		_, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: strings.ReplaceAll(c.key, "_", " "), Value: c.value})
		if memory.ErrorCode(err) != memory.CodeSecretRefused {
			t.Errorf("Put(%q, %q) = %v, want CodeSecretRefused", c.key, c.value, err)
		}
	}
	if rec, _ := repo.Record(memorytest.Ana); len(rec.Facts) != 0 {
		t.Errorf("stored %v", values(rec.Facts))
	}
}

func TestSensitiveFactsWaitForTheUsersYes(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{
			setQ("health_condition", "type 1 diabetes", "I have type 1 diabetes"),                                                  // the rules, by key
			setQ("faith", "Catholic", "I'm Catholic"),                                                                              // the rules, by key and value
			{Op: memory.OpSet, Key: "weekend", Value: "goes to mass", Evidence: "I go to mass", Category: memory.CategoryReligion}, // the model's label
			setQ("name", "Ana", "I'm Ana"),
		}},
		memorytest.Answer{Operations: []memory.Operation{setQ("name", "Ana", "I'm Ana")}},
	)
	s, repo := newStore(t, memory.Config{}, memory.WithModel(model))
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana. I have type 1 diabetes. I'm Catholic and I go to mass on weekends.", "Thanks")
	res, err := s.Extract(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != 3 || res.Sets != 1 {
		t.Errorf("pending %d, sets %d; want 3 and 1", res.Pending, res.Sets)
	}
	if diff := cmp.Diff(map[string]string{"name": "Ana"}, values(res.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	m, err := s.GetFactsAndPending(ctx, memorytest.Ana)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"faith", "health_condition", "weekend"}, keys(m.Pending)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if c := m.Pending[0].Category; c != memory.CategoryReligion {
		t.Errorf("faith category %q", c)
	}
	// Not in the next extraction's prompt.
	if _, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 2, 8, "I'm Ana", "ok")); err != nil {
		t.Fatal(err)
	}
	if sys := model.Requests()[1].System; strings.Contains(sys, "diabetes") || strings.Contains(sys, "Catholic") {
		t.Errorf("a pending fact reached the prompt:\n%s", sys)
	}
	// Keep one, discard one.
	kept, err := s.KeepPending(ctx, memorytest.Ana, "Health Condition")
	if err != nil || kept.Value != "type 1 diabetes" || kept.Evidence != "I have type 1 diabetes" || kept.Category != memory.CategoryHealth {
		t.Fatalf("KeepPending = %+v, %v", kept, err)
	}
	if err := s.DiscardPending(ctx, memorytest.Ana, "faith"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeepPending(ctx, memorytest.Ana, "faith"); memory.ErrorCode(err) != memory.CodePendingNotFound {
		t.Errorf("keep after discard: %v, want CodePendingNotFound", err)
	}
	m, _ = s.GetFactsAndPending(ctx, memorytest.Ana)
	if diff := cmp.Diff(map[string]string{"name": "Ana", "health_condition": "type 1 diabetes"}, values(m.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"weekend"}, keys(m.Pending)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if _, ok := rec.Tombstones["faith"]; !ok {
		t.Errorf("a discard leaves no tombstone: a queued message would propose it again")
	}
	// A redelivered older message does not propose the discarded fact again.
	model.Push(memorytest.Answer{Operations: []memory.Operation{setQ("faith", "Catholic", "I'm Catholic")}})
	old := extractReq(memorytest.Ana, "th-9", 0, 2, "I'm Catholic", "ok")
	old.SentAt = t0
	if res, err := s.Extract(ctx, old); err != nil || res.Pending != 0 || res.Forgotten != 1 {
		t.Errorf("older message after discard: %+v, %v", res, err)
	}
}

func TestPendingIsConfigurableAndLapses(t *testing.T) {
	ctx := context.Background()
	ops := []memory.Operation{setQ("health_condition", "asthma", "I have asthma")}
	// No pending categories: the fact goes in at once, with its category.
	s, _ := newStore(t, memory.Config{PendingCategories: []string{}}, memory.WithModel(memorytest.NewModel(memorytest.Answer{Operations: ops})))
	res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "I have asthma", "ok"))
	if err != nil || res.Sets != 1 || res.Facts[0].Category != memory.CategoryHealth {
		t.Fatalf("with no pending categories: %+v, %v", res, err)
	}
	if err := (memory.Config{PendingCategories: []string{"hobbies"}}).Validate(); memory.ErrorCode(err) != memory.CodeInvalidConfig {
		t.Errorf("an unknown category is accepted: %v", err)
	}
	// The wait ends: the pending fact is no longer read, then removed.
	clock := &clockAt{t: t0}
	s, repo := newStore(t, memory.Config{PendingLifetime: 48 * time.Hour},
		memory.WithModel(memorytest.NewModel(memorytest.Answer{Operations: ops})), memory.WithClock(clock.now))
	if _, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "I have asthma", "ok")); err != nil {
		t.Fatal(err)
	}
	clock.t = t0.Add(47 * time.Hour)
	if m, _ := s.GetFactsAndPending(ctx, memorytest.Ana); len(m.Pending) != 1 {
		t.Fatalf("pending before its wait ended: %+v", m)
	}
	clock.t = t0.Add(48 * time.Hour)
	if m, _ := s.GetFactsAndPending(ctx, memorytest.Ana); len(m.Pending) != 0 {
		t.Errorf("pending after its wait ended: %+v", m.Pending)
	}
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "name", Value: "Ana"}); err != nil {
		t.Fatal(err)
	}
	if rec, _ := repo.Record(memorytest.Ana); len(rec.Pending) != 0 || !rec.Expires.IsZero() {
		t.Errorf("the next write kept the lapsed pending fact: %+v", rec)
	}
}

func TestTemporaryFactsEnd(t *testing.T) {
	ctx := context.Background()
	clock := &clockAt{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)} // a Wednesday
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "location", Value: "Paris", Evidence: "I'm in Paris until Friday", ValidUntil: "2026-12-04"},
		{Op: memory.OpSet, Key: "project", Value: "Atlas", Evidence: "working on Atlas", ValidUntil: "2031-01-01"},
		{Op: memory.OpSet, Key: "trip", Value: "Rome", Evidence: "back from Rome", ValidUntil: "2026-11-30"},
		setQ("name", "Ana", "I'm Ana"),
	}})
	s, repo := newStore(t, memory.Config{}, memory.WithModel(model), memory.WithClock(clock.now))
	res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2,
		"I'm Ana. I'm in Paris until Friday, working on Atlas this year, just back from Rome.", "Enjoy"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != 1 || res.Sets != 3 {
		t.Errorf("ended %d, sets %d; want the past date left out", res.Ended, res.Sets)
	}
	byKey := map[string]memory.Fact{}
	for _, f := range res.Facts {
		byKey[f.Key] = f
	}
	if got := byKey["location"].ValidUntil; !got.Equal(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("location ends %v", got)
	}
	if got := byKey["project"].ValidUntil; !got.Equal(time.Date(2027, 12, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("an end date over a year ahead is %v, want brought back to a year", got)
	}
	// Friday still holds; Saturday it is gone from reads and prompts.
	clock.t = time.Date(2026, 12, 4, 23, 59, 0, 0, time.UTC)
	if facts, _ := s.GetFacts(ctx, memorytest.Ana); indexOf(facts, "location") < 0 {
		t.Errorf("location gone on its last day")
	}
	clock.t = time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	if facts, _ := s.GetFacts(ctx, memorytest.Ana); indexOf(facts, "location") >= 0 {
		t.Errorf("location read after its last day")
	}
	model.Push(memorytest.Answer{Operations: []memory.Operation{}})
	if _, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 2, 8, "hello", "hi")); err != nil {
		t.Fatal(err)
	}
	if sys := model.Requests()[1].System; strings.Contains(sys, "Paris") {
		t.Errorf("an ended fact reached the prompt")
	}
	// That extraction was a write: the item no longer holds it.
	rec, _ := repo.Record(memorytest.Ana)
	if indexOf(rec.Facts, "location") >= 0 {
		t.Errorf("the next write kept the ended fact")
	}
	if !rec.Expires.Equal(time.Date(2027, 12, 4, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Expires = %v, want the day after the project's end", rec.Expires)
	}
}

func TestPutWithEndDate(t *testing.T) {
	ctx := context.Background()
	clock := &clockAt{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	s, repo := newStore(t, memory.Config{}, memory.WithClock(clock.now))
	f, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "location", Value: "Paris", Origin: memory.OriginManual, ValidUntil: "2026-12-05"})
	if err != nil || !f.ValidUntil.Equal(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("Put = %+v, %v", f, err)
	}
	// A date alone: no time (even within the range), no other shape.
	for _, bad := range []string{"2026-12-01", "2028-01-01", "next week", "2026-13-01", "2026-12-05T23:25:53Z",
		"2026-12-05T10:00:00+01:00", "2026-12-5", "2027-2-9", "2027-02-30", "20261205", " 2026-12-05", "2026-12-05 "} {
		_, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "x", Value: "y", Origin: memory.OriginManual, ValidUntil: bad})
		if memory.ErrorCode(err) != memory.CodeInvalidValidUntil {
			t.Errorf("validUntil %q: %v, want CodeInvalidValidUntil", bad, err)
		}
	}
	// After it ends, a write of another key by the fast path is refused
	// by the repository and made whole, which removes the ended fact.
	clock.t = time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "name", Value: "Ana"}); err != nil {
		t.Fatal(err)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if diff := cmp.Diff([]string{"name"}, keys(rec.Facts)); diff != "" {
		t.Errorf("stored keys (-want +got):\n%s", diff)
	}
	if repo.Calls("Save") != 2 {
		t.Errorf("Save calls %d, want the temporary fact's write and the one that removed it", repo.Calls("Save"))
	}
}

func TestEvidenceFound(t *testing.T) {
	user := []memory.Turn{{Role: memory.RoleUser, Text: "Honestly? I've moved to São Paulo — last month!"},
		{Role: memory.RoleAssistant, Text: "Welcome to São Paulo, engineer."}}
	for _, c := range []struct {
		ev   string
		want bool
	}{
		{"I've moved to São Paulo", true},
		{"ive moved to sao paulo", false}, // letters are not folded to ASCII
		{"I’VE MOVED TO SÃO PAULO — LAST MONTH", true},
		{"moved to São … last month", true},
		{"last month ... moved", false}, // parts out of order
		{"Welcome to São Paulo", false}, // the assistant's words
		{"engineer", false},
		{"mov", false}, // not a whole word
		{"São", true},
		{"", false},
		{"!!", false},
	} {
		if got := memory.EvidenceFound(c.ev, user); got != c.want {
			t.Errorf("EvidenceFound(%q) = %v, want %v", c.ev, got, c.want)
		}
	}
}

// TestNormalizerAppliesToBothSides: a quote in another Unicode normal form
// than the user's turn is found once the store normalises both (here a
// stand-in for NFC: the core links no normalisation library).
func TestNormalizerAppliesToBothSides(t *testing.T) {
	nfc := func(s string) string { return strings.ReplaceAll(s, "e\u0301", "é") }
	turnNFD := "I live in Mane\u0301ge street" // e + combining acute
	answer := memorytest.Answer{Operations: []memory.Operation{setQ("street", "Manége", "I live in Manége street")}}
	for _, c := range []struct {
		opts []memory.Option
		sets int
	}{{nil, 0}, {[]memory.Option{memory.WithNormalizer(nfc)}, 1}} {
		s, _ := newStore(t, memory.Config{}, append(c.opts, memory.WithModel(memorytest.NewModel(answer)))...)
		res, err := s.Extract(context.Background(), extractReq(memorytest.Ana, "th-1", 0, 2, turnNFD, "ok"))
		if err != nil || res.Sets != c.sets {
			t.Errorf("with %d options: sets %d, %v; want %d", len(c.opts), res.Sets, err, c.sets)
		}
	}
}
