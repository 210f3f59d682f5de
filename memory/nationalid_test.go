package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// nationalIDs are identity, tax and passport numbers as users write them,
// in each language of the gold set: under a key that names them, or in a
// sentence that does. The numbers are the schemes' published examples or
// made up to pass their checks; none is a person's.
var nationalIDs = []struct {
	lang, key, value string
	byKey            bool // only the key names the number
}{
	{"en", "ssn", "078-05-1120", true},
	{"en", "ssn_last_four", "1120", true},
	{"en", "SSN", "078-05-1120", true},
	{"en", "tax", "my TIN is 912-70-1234", false},
	{"en", "note", "My SSN is 123-45-6789", false},
	{"en", "form", "The form wants my social security number, 123 45 6789.", false},
	{"en", "tax", "my ITIN: 912-70-1234", false},
	{"en", "passport_number", "563829104", true},
	{"en", "travel", "passport number 563829104, expires 2031", false},
	{"en", "note", "National Insurance number AB123456C", false},
	{"en", "note", "my national ID is 12345678Z", false},
	{"pt", "nif", "123456789", true},
	{"pt", "nota", "O meu NIF é 123 456 789.", false},
	{"pt", "nota", "número de contribuinte 123456789", false},
	{"pt", "documento", "Cartão de Cidadão 12345678 0 ZZ0", false},
	{"pt", "cpf", "111.444.777-35", true},
	{"pt", "cpf_do_pai", "111.444.777-35", true},
	{"pt", "documento", "meu CPF: 11144477735", false},
	{"pt", "documento", "RG 12.345.678-9", false},
	{"pt", "numero_de_passaporte", "CB123456", true},
	{"es", "dni", "12345678Z", true},
	{"es", "nota", "Mi DNI es 12345678-Z", false},
	{"es", "nota", "mi NIE es X1234567L", false},
	{"es", "viaje", "número de pasaporte PAA123456", false},
	{"fr", "nir", "2 55 08 14 168 025 38", true},
	{"fr", "note", "mon numéro de sécurité sociale est 1 85 05 78 006 084 91", false},
	{"fr", "voyage", "numéro de passeport 18AB12345", false},
	{"de", "steuer_id", "86095742719", true},
	{"de", "notiz", "Meine Steuer-ID ist 86 095 742 719", false},
	{"de", "notiz", "Personalausweis L01X00T47", false},
	{"de", "reise", "Reisepassnummer C01X00T47", false},
	{"it", "codice_fiscale", "RSSMRA85T10A562S", true},
	{"it", "nota", "il mio codice fiscale è RSSMRA85T10A562S", false},
	{"it", "viaggio", "passaporto YA1234567", false},
	{"nl", "notitie", "mijn BSN is 111222333", false},
	{"pl", "notatka", "mój PESEL to 44051401359", false},
	{"sv", "anteckning", "mitt personnummer är 811228-9874", false},
	{"tr", "not", "TC kimlik no 10000000146", false},
	{"ru", "заметка", "мой СНИЛС 112-233-445 95", false},
	{"ru", "заметка", "паспорт 4506 123456", false},
	{"ja", "メモ", "マイナンバーは123456789018です", false},
	{"zh", "备注", "我的身份证号码是11010519491231002X", false},
	{"ko", "메모", "주민등록번호 800101-1234567", false},
	{"hi", "नोट", "मेरा आधार 2341 2341 2346 है", false},
	{"ar", "ملاحظة", "رقم الهوية 1000000008", false},
	{"ar", "ملاحظة", "رقم الهوية ١٠٠٠٠٠٠٠٠٨", false},
	{"ja", "メモ", "マイナンバーは１２３４５６７８９０１８です", false},
	{"hi", "आधार_नंबर", "२३४१ २३४१ २३४६", true},
	{"he", "הערה", "מספר זהות 123456782", false},
}

// notNationalIDs are numbers of those shapes under another name, or
// numbers near those names that no scheme issues (a failed check, an area
// never given out): facts, in each language.
var notNationalIDs = []struct{ lang, key, value string }{
	{"en", "order_number", "123-45-6789"},
	{"en", "note", "order 078-05-1120 shipped"},
	{"en", "note", "My SSN is 666-12-3456"}, // area 666 is never issued
	{"en", "phone", "+1 415 555 2671"},
	{"en", "passport_country", "Portugal"},
	{"en", "note", "my passport expires 2031-05-01"},
	{"en", "social_security", "retired, draws it since 2019"},
	{"en", "years_in_lisbon", "2019-2023"},
	{"en", "note", "my boarding pass 563829104"},
	{"en", "note", "employee ID number 12345674"}, // passes Israel's check, but names no national ID
	{"pt", "numero_da_encomenda", "123456789"},
	{"pt", "telefone", "912 345 678"},
	{"pt", "codigo_postal", "4050-123"},
	{"pt", "nota", "O meu NIF é 123456780"}, // check digit fails
	{"pt", "pedido", "111.444.777-35"},
	{"pt", "nota", "CPF 111.444.777-36"},
	{"es", "pedido", "12345678Z"},
	{"es", "nota", "mi DNI es 12345678A"},
	{"es", "codigo_postal", "28013"},
	{"fr", "commande", "1 85 05 78 006 084 91"},
	{"fr", "note", "sécurité sociale : remboursement à 70 %"},
	{"fr", "note", "numéro de sécurité sociale 2 55 08 14 168 025 39"},
	{"de", "bestellnummer", "86095742719"},
	{"de", "notiz", "Steuer-ID 86095742718"},
	{"de", "postleitzahl", "10115"},
	{"de", "notiz", "nie vor 2020 in Berlin gewesen"},
	{"it", "ordine", "RSSMRA85T10A562S"},
	{"it", "nota", "codice fiscale RSSMRA85T10A562A"},
	{"nl", "bestelnummer", "111222333"},
	{"nl", "notitie", "BSN 111222334"},
	{"pl", "zamowienie", "44051401359"},
	{"pl", "notatka", "PESEL 44051401358"},
	{"sv", "ordernummer", "811228-9874"},
	{"sv", "anteckning", "personnummer 811228-9875"},
	{"tr", "siparis", "10000000146"},
	{"tr", "not", "TC kimlik no 10000000147"},
	{"ru", "заказ", "112-233-445 95"},
	{"ru", "заметка", "СНИЛС 112-233-445 96"},
	{"ja", "注文番号", "123456789018"},
	{"ja", "メモ", "マイナンバーは123456789019"},
	{"zh", "订单号", "11010519491231002X"},
	{"zh", "备注", "身份证号码110105194912310021"},
	{"ko", "주문번호", "800101-1234567"},
	{"ko", "메모", "주민등록번호 801301-1234567"}, // no 13th month
	{"hi", "ऑर्डर", "234123412346"},
	{"hi", "नोट", "आधार 234123412347"},
	{"ar", "رقم_الطلب", "1000000008"},
	{"ar", "ملاحظة", "رقم الهوية 1000000009"},
	{"he", "מספר_הזמנה", "123456782"},
	{"he", "הערה", "מספר זהות 123456783"},
}

func TestNationalIdentityNumbersAreSecrets(t *testing.T) {
	for _, c := range nationalIDs {
		if got := memory.SecretKind(c.key, c.value, ""); got != memory.SecretNationalID {
			t.Errorf("%s: SecretKind(%q, %q) = %q, want %q", c.lang, c.key, c.value, got, memory.SecretNationalID)
		}
		if got := memory.SecretKind("note", "", c.value); !c.byKey && got != memory.SecretNationalID {
			t.Errorf("%s: in the evidence %q: %q, want %q", c.lang, c.value, got, memory.SecretNationalID)
		}
	}
	for _, c := range notNationalIDs {
		if got := memory.SecretKind(c.key, c.value, c.value); got != "" {
			t.Errorf("%s: SecretKind(%q, %q) = %q, want none", c.lang, c.key, c.value, got)
		}
	}
}

// TestNationalIdentityNumbersAreNeverKept holds the rule on each door: a
// PUT (and the remember tool, which calls it) is refused with the code
// and words of every secret, an extraction leaves the SET out, an import
// counts it in its leftOut, and nothing is stored; the same shape under
// another name is kept.
func TestNationalIdentityNumbersAreNeverKept(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{})
	for _, origin := range []memory.Origin{memory.OriginManual, memory.OriginRememberTool} {
		_, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "ssn", Value: "123-45-6789", Origin: origin})
		if memory.ErrorCode(err) != memory.CodeSecretRefused {
			t.Errorf("Put ssn by %s = %v, want CodeSecretRefused", origin, err)
		}
		_, pwErr := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "password", Value: "hunter2", Origin: origin})
		var idE, pwE *memory.Error
		if !errors.As(err, &idE) || !errors.As(pwErr, &pwE) || idE.UserMessage != pwE.UserMessage {
			t.Errorf("refusals %v and, for a password, %v: want the same userMessage", err, pwErr)
		}
	}
	remember := memory.ToolCall{Name: memory.RememberToolName, Input: json.RawMessage(`{"key":"Passport number","value":"563829104"}`)}
	if _, err := s.ExecuteTool(ctx, memorytest.Ana, remember, true); memory.ErrorCode(err) != memory.CodeSecretRefused {
		t.Errorf("remember_user_fact of a passport number = %v, want CodeSecretRefused", err)
	}
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "order number", Value: "123-45-6789"}); err != nil {
		t.Errorf("an order number of an SSN's shape: %v, want kept", err)
	}
	if rec, _ := repo.Record(memorytest.Ana); len(rec.Facts) != 1 || rec.Facts[0].Key != "order_number" {
		t.Errorf("stored %v, want the order number only", values(rec.Facts))
	}

	say := "The form wants my SSN, 078-05-1120. Which box?"
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		setQ("ssn", "078-05-1120", "my SSN, 078-05-1120"),
		setQ("form_field", "078-05-1120", "my SSN, 078-05-1120"),
	}})
	s, repo = newStore(t, memory.Config{}, memory.WithModel(model))
	res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, say, "Box 4."))
	if err != nil {
		t.Fatal(err)
	}
	if res.Secrets != 2 || len(res.Facts) != 0 {
		t.Errorf("extraction: secrets %d, facts %v; want both SETs left out", res.Secrets, values(res.Facts))
	}
	if rec, _ := repo.Record(memorytest.Ana); len(rec.Facts)+len(rec.Pending) != 0 {
		t.Errorf("stored %v", values(rec.Facts))
	}

	list := "- SSN: 123-45-6789\n- Lives in Porto.\n- Order number 123-45-6789 is on its way."
	model = memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		ev("ssn", "123-45-6789", "SSN: 123-45-6789"),
		ev("home_city", "Porto", "Lives in Porto."),
	}})
	s, _ = newStore(t, memory.Config{}, memory.WithModel(model))
	imp, err := s.Import(ctx, importReq(memorytest.Ana, "imp-1", list))
	if err != nil {
		t.Fatal(err)
	}
	if imp.Mark.LeftOut.Secrets != 1 || imp.Mark.Proposed != 1 {
		t.Errorf("import: left out %+v, proposed %d; want the SSN left out as a secret and the city proposed", imp.Mark.LeftOut, imp.Mark.Proposed)
	}
}

// BenchmarkSecretKind is the filter's cost on one SET of an ordinary fact
// with its evidence, every rule run: go test -run X -bench SecretKind
// -cpuprofile cpu.out ./memory/ shows the national identity numbers' share.
func BenchmarkSecretKind(b *testing.B) {
	for b.Loop() {
		memory.SecretKind("home_city", "Porto", "Quick update: I moved to Porto last month. Any good bakeries near Ribeira?")
	}
}
