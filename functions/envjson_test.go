package functions_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/usermemory/usermemory/internal/httpapitest"
)

// envJSONOwnValues are the variables of events/env.json whose local value
// differs from the deployed one on purpose: the table's physical name.
var envJSONOwnValues = map[string]bool{"TABLE_NAME": true}

// TestEnvJSONHoldsTemplateDefaults holds events/env.json, the environment
// of `sam local invoke`, to template.yaml deployed with its defaults: each
// variable it sets is one a function has, with the value the template
// gives it (the erasure fence, the caps, the model ID…).
func TestEnvJSONHoldsTemplateDefaults(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "events", "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Parameters map[string]string }
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatalf("events/env.json: %v", err)
	}
	if len(doc.Parameters) == 0 {
		t.Fatal("events/env.json: no Parameters")
	}
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	deployed := map[string]map[string]bool{} // variable → the values functions get
	for _, f := range app.Functions {
		for k, v := range f.Env {
			if deployed[k] == nil {
				deployed[k] = map[string]bool{}
			}
			deployed[k][v] = true
		}
	}
	for k, v := range doc.Parameters {
		values, ok := deployed[k]
		switch {
		case !ok:
			t.Errorf("events/env.json sets %s, which no function of template.yaml has", k)
		case envJSONOwnValues[k]:
		case !values[v]:
			t.Errorf("events/env.json sets %s=%q; template.yaml gives %v", k, v, slices.Sorted(maps.Keys(values)))
		}
	}
}
