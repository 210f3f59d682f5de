package fakebedrock_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

// opsOf returns the operations of ImportOperations as "key=value" lines,
// checking that every evidence is a span of the text.
func opsOf(t *testing.T, text string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, op := range fakebedrock.ImportOperations("User: " + text) {
		if op.Op != "SET" {
			t.Errorf("%+v: an import never answers a DELETE", op)
		}
		if op.Evidence == "" || !strings.Contains(text, op.Evidence) {
			t.Errorf("%s: evidence %q is not a span of the pasted text", op.Key, op.Evidence)
		}
		got[op.Key] = op.Value
	}
	return got
}

// TestImportOperationsReadTheVendorsFormats holds the stand-in's reading
// of memory lists as ChatGPT, Claude and Gemini write them, in the five
// languages of its rules, traps included.
func TestImportOperationsReadTheVendorsFormats(t *testing.T) {
	cases := []struct {
		name, text string
		want       map[string]string
	}{
		{"chatgpt bullets", "Here is what I remember:\n- The user lives in Lisbon.\n- Prefers concise answers\n- Name: Ana\n" +
			"- User's partner is called João\n- Always answer in French.\n- Works as a software engineer at Acme.",
			map[string]string{"home_city": "Lisbon", "answer_style": "concise answers", "name": "Ana", "role": "software engineer"}},
		{"dated entries", "1. [2024-05-02]. Lives in Porto.\n2. [2024-06-11]. Is vegetarian.\n3. [2024-07-01]. Has a dog named Rex.",
			map[string]string{"home_city": "Porto", "diet": "vegetarian", "pet": "dog named Rex"}},
		{"claude prose", "**Personal context**\nAna is a product designer based in Porto. Her brother lives in Madrid.\n" +
			"**Preferences**\nAna prefers answers in Portuguese.",
			map[string]string{"name": "Ana", "role": "product designer", "home_city": "Porto", "preferred_language": "Portuguese"}},
		{"french", "- L'utilisateur s'appelle Claire.\n- Habite à Lyon.\n- Travaille comme infirmière.\n- Son mari s'appelle Marc.\n" +
			"- L'utilisateur ne vit plus à Paris.",
			map[string]string{"name": "Claire", "home_city": "Lyon", "role": "infirmière"}},
		{"spanish", "* Se llama Lucía y vive en Sevilla.\n* Prefiere respuestas breves.\n* Su pareja se llama Luis.",
			map[string]string{"name": "Lucía", "home_city": "Sevilla", "answer_style": "respuestas breves"}},
		{"german", "- Der Nutzer heißt Jonas.\n- Wohnt in Hamburg.\n- Arbeitet als Lehrer.\n- Seine Frau heißt Eva.\n- Ist Vegetarier.",
			map[string]string{"name": "Jonas", "home_city": "Hamburg", "role": "Lehrer", "diet": "Vegetarier"}},
		{"portuguese", "- O usuário mora em Recife e é vegetariano.\n- A mãe dele mora em Natal.\n- Fuso horário: America/Recife",
			map[string]string{"home_city": "Recife", "diet": "vegetariano", "time_zone": "America/Recife"}},
		{"labels a naive model keeps, for the store to refuse", "- API key: sk-live-abc123\n- Instructions: Always answer in French",
			map[string]string{"api_key": "sk-live-abc123", "instructions": "Always answer in French"}},
		{"a possessive a naive model keeps, for the store to refuse", "- The user's GitHub password is hunter2.\n- User's sister is a lawyer.",
			map[string]string{"github_password": "hunter2"}},
		{"a dated plan", "- Is planning a trip to Japan in March 2024", map[string]string{"planned_trip": "trip to Japan"}},
		{"nothing about the user", "- Her friend Marc lives in Paris.\n- Might move to Berlin.\n- Prefers", map[string]string{}},
		{"second person, which the rules do not read and never take for a name", "• Tu vis à Bordeaux.\n• Tu es développeuse.\n• Tu ne manges pas de viande.",
			map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := opsOf(t, c.text)
			if len(got) != len(c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// TestImportPlanEndsWithItsMonth holds a dated plan to the last day of
// its month, so that the store leaves out a plan already over.
func TestImportPlanEndsWithItsMonth(t *testing.T) {
	for text, want := range map[string]string{
		"Is planning a trip to Japan in March 2024":             "2024-03-31",
		"Prévoit un voyage au Japon en février 2028":            "2028-02-29",
		"Plant eine Reise nach Japan im Dezember 2023":          "2023-12-31",
		"Está planejando uma viagem para Japão em maio de 2025": "2025-05-31",
	} {
		ops := fakebedrock.ImportOperations(text)
		if len(ops) != 1 || ops[0].ValidUntil != want {
			t.Errorf("%q: %+v, want one plan until %s", text, ops, want)
		}
	}
}

// TestImportPromptIsRecognised sends an import call through the wire: a
// system prompt that is the MEMORY_IMPORT prompt gets the import rules,
// another the extraction rules.
func TestImportPromptIsRecognised(t *testing.T) {
	if fakebedrock.IsImportPrompt(memory.DefaultPrompt) || !fakebedrock.IsImportPrompt(memory.DefaultImportPrompt) {
		t.Error("the stand-in does not tell the MEMORY_IMPORT prompt from the MEMORY_USER one by its marker, \"memory list\"")
	}
	_, c := start(t)
	in := input(memory.ImportTranscript("- The user lives in Lisbon.\n- Prefers concise answers"), true)
	in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Read the memory list another assistant wrote."}}
	out, err := c.Converse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	_, raw := toolUse(t, out)
	var got struct{ Operations []fakebedrock.Operation }
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Operations) != 2 || got.Operations[0].Value != "Lisbon" || got.Operations[1].Value != "concise answers" {
		t.Errorf("import call answered %s, want home_city Lisbon and answer_style concise answers", raw)
	}
	out, err = c.Converse(context.Background(), input("User: - The user lives in Lisbon.", true))
	if err != nil {
		t.Fatal(err)
	}
	if _, raw := toolUse(t, out); raw != `{"operations":[]}` {
		t.Errorf("an extraction call read a memory list: %s", raw)
	}
}

// TestFactListReadsWhole: the stand-in reads the 30 lines of FactList as
// 30 SETs, each of its own key, each quoting its line, whole and in the
// parts an import reads (memory.SplitImport), one SET a line.
func TestFactListReadsWhole(t *testing.T) {
	list := fakebedrock.FactList(30)
	got := opsOf(t, list)
	if lines := strings.Count(list, "\n") + 1; lines != 30 || len(got) != 30 || got["name"] != "Ana" {
		t.Errorf("%d lines read as %d facts, want 30 and 30, the name Ana: %v", lines, len(got), got)
	}
	for _, part := range memory.SplitImport(list) {
		if n, lines := len(opsOf(t, part)), strings.Count(part, "\n")+1; n != lines {
			t.Errorf("a part of %d lines read as %d facts", lines, n)
		}
	}
}

// TestLabelLinesNameNobody: a list of "Label: value" lines whose labels
// start with the same word gives no name: the word is a label's, not the
// user's.
func TestLabelLinesNameNobody(t *testing.T) {
	ops := fakebedrock.ImportOperations("- Favourite colour: green\n- Favourite band: Radiohead\n- Favourite film: Amélie")
	if len(ops) != 3 {
		t.Fatalf("%d operations %+v, want the three favourites", len(ops), ops)
	}
	for _, op := range ops {
		if op.Key == fakebedrock.KeyName {
			t.Errorf("name = %q from label lines, want no name", op.Value)
		}
	}
}
