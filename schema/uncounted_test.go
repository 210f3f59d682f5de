package schema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/schema"
)

// TestUncountedMessage holds the message without turn counts: written
// without either count, read back Uncounted, valid; a counted message with
// counts of 0 keeps them; one count without the other is refused at the
// message (dependentRequired).
func TestUncountedMessage(t *testing.T) {
	m := schema.ExtractionMessage{Version: 1, TenantID: "acme", UserID: "u-1", ThreadID: "th-1", Uncounted: true,
		Turns: []schema.Turn{{Role: "user", Text: "Hi"}}, SentAt: time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)}
	if err := m.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"version":1,"tenantId":"acme","userId":"u-1","threadId":"th-1","turns":[{"role":"user","text":"Hi"}],"sentAt":"2026-11-29T22:00:00Z"}`
	if string(body) != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
	got, err := schema.DecodeExtractionMessageV1(body)
	if err != nil || !got.Uncounted || got.TurnCount != 0 || got.PreviousTurnCount != 0 {
		t.Errorf("decoded %+v, %v; want uncounted", got, err)
	}
	var lenient schema.ExtractionMessage
	if err := json.Unmarshal(body, &lenient); err != nil || !lenient.Uncounted {
		t.Errorf("encoding/json reads %+v, %v; want uncounted", lenient, err)
	}

	counted := m
	counted.Uncounted = false
	body, _ = json.Marshal(counted)
	if !strings.Contains(string(body), `"previousTurnCount":0,"turnCount":0,"turns"`) {
		t.Errorf("a counted message of 0 turns is written %s", body)
	}
	if got, err := schema.DecodeExtractionMessageV1(body); err != nil || got.Uncounted {
		t.Errorf("a counted message of 0 turns reads %+v, %v", got, err)
	}

	for _, one := range []string{`"turnCount":0,`, `"previousTurnCount":0,`} {
		_, err := schema.DecodeExtractionMessageV1([]byte(strings.Replace(string(body), one, "", 1)))
		var inv *schema.InvalidError
		if !errors.As(err, &inv) || inv.Where() != "/ (dependentRequired)" {
			t.Errorf("without %s: %v, want / (dependentRequired)", one, err)
		}
	}
}
