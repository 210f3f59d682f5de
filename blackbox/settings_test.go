package blackbox

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// A feature is done when it holds at every setting the template admits.
// The tests of an edge say which settings they need (requirement), and
// run on every target of the run that has them: the deployed stack when
// its parameters do, else they skip naming the setting; with
// USERMEMORY_BLACKBOX=local, the stack at the defaults and the stacks
// of profiles, started on demand (all at once, with the stack at the
// defaults, when the whole suite runs). docs/testing.md, "The edges",
// says why the profiles are these.

// profile is a local stack the suite starts at settings of its own: the
// template's defaults with params overridden.
type profile struct {
	name   string
	params map[string]string

	once sync.Once
	tgt  *target
	err  error
	stop func()
}

// profiles are the local stacks at the template's bounds. Bounds that
// no test sets against each other share a stack: high holds what needs
// many facts and few extractions, low what needs the smallest record and
// an extraction at every answer, off the one setting under which nothing
// is extracted. Each names every bound it holds, a default included, so
// that a new default leaves no bound untested.
var profiles = []*profile{
	{name: "high", params: map[string]string{"MaxFacts": "75", "MaxFactChars": "200", "ExtractEveryTurns": "1000", "IdleReadSeconds": "0"}},
	{name: "low", params: map[string]string{"MaxFacts": "1", "MaxFactChars": "16", "ExtractEveryTurns": "1", "PendingCategories": "none"}},
	{name: "off", params: map[string]string{"ExtractionEnabled": "false"}},
}

// startProfiles starts the stack of every profile in the background.
func startProfiles() {
	for _, p := range profiles {
		go p.start()
	}
}

// stopProfiles stops the stacks the profiles started, waiting for those
// still starting.
func stopProfiles() {
	for _, p := range profiles {
		p.once.Do(func() {})
		if p.stop != nil {
			p.stop()
		}
	}
}

// start starts the profile's stack once and returns its target.
func (p *profile) start() (*target, error) {
	p.once.Do(func() {
		dir, err := os.MkdirTemp("", "usermemory-blackbox-"+p.name)
		if err != nil {
			p.err = err
			return
		}
		var args []string
		for _, k := range slices.Sorted(maps.Keys(p.params)) {
			args = append(args, "-param", k+"="+p.params[k])
		}
		if p.stop, p.err = startLocal(context.Background(), dir, args...); p.err != nil {
			p.err = fmt.Errorf("the stack %s (%s): %w", p.name, strings.Join(args, " "), p.err)
			return
		}
		t, err := baseTarget()
		if err == nil {
			err = t.local(context.Background(), dir)
		}
		p.tgt, p.err = t, err
		if t != nil {
			t.name += " (" + p.name + ": " + strings.Join(args, " ") + ")"
		}
	})
	return p.tgt, p.err
}

// templateDefaults are the template's parameter defaults, read once.
var templateDefaults = sync.OnceValues(func() (map[string]string, error) {
	tmpl, err := samtemplate.Load(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range []string{"MaxFacts", "MaxFactChars", "ExtractEveryTurns", "IdleReadSeconds", "ExtractionEnabled", "PendingCategories"} {
		out[name], _ = tmpl.ParameterDefault(name)
	}
	return out, nil
})

// settings returns the profile's settings before its stack runs: the
// template's defaults with its params.
func (p *profile) settings(tb testing.TB) map[string]string {
	tb.Helper()
	d, err := templateDefaults()
	if err != nil {
		tb.Fatalf("the template's defaults: %v", err)
	}
	s := maps.Clone(d)
	maps.Copy(s, p.params)
	return s
}

// requirement is a setting a test needs: a template parameter at a
// value.
type requirement struct{ param, value string }

func (r requirement) String() string { return r.param + " " + r.value }

// is requires the parameter to be value.
func is(param, value string) requirement { return requirement{param, value} }

// meets reports whether settings s meet every requirement; a setting s
// lacks meets none.
func meets(s map[string]string, reqs []requirement) bool {
	for _, r := range reqs {
		if v, ok := s[r.param]; !ok || v != r.value {
			return false
		}
	}
	return true
}

// every returns every target of the run whose settings meet reqs,
// starting the local stacks it needs, the target at the defaults first.
// It skips t, naming the settings, when none does.
func every(t *testing.T, reqs ...requirement) []*target {
	t.Helper()
	base := need(t)
	var out []*target
	if meets(base.known(t), reqs) {
		out = append(out, base)
	}
	if os.Getenv("USERMEMORY_BLACKBOX") == "local" {
		for _, p := range profiles {
			if !meets(p.settings(t), reqs) {
				continue
			}
			tg, err := p.start()
			if err != nil {
				t.Fatalf("blackbox: %v", err)
			}
			if !meets(tg.known(t), reqs) {
				t.Fatalf("blackbox: %s runs with %v, want %v", tg.name, tg.settings, reqs)
			}
			out = append(out, tg)
		}
	}
	if len(out) == 0 {
		t.Skipf("blackbox: this test needs the stack setting %v; %s runs with %s", reqs, base.name, base.describe(reqs))
	}
	return out
}

// at returns the first target of every.
func at(t *testing.T, reqs ...requirement) *target {
	t.Helper()
	return every(t, reqs...)[0]
}

// forEvery runs f as a subtest, in parallel, on every target that meets
// reqs, named for its settings.
func forEvery(t *testing.T, f func(t *testing.T, tg *target), reqs ...requirement) {
	t.Helper()
	for _, tg := range every(t, reqs...) {
		t.Run(tg.label(), func(t *testing.T) {
			t.Parallel()
			f(t, tg)
		})
	}
}

// label names the target by the settings of the edges, for a subtest.
func (t *target) label() string {
	var parts []string
	for _, p := range []string{"MaxFacts", "MaxFactChars", "ExtractEveryTurns", "ExtractionEnabled", "PendingCategories"} {
		parts = append(parts, p+"="+t.settings[p])
	}
	return strings.Join(parts, ",")
}

// known returns the target's settings, the API's limits read into them
// when its parameters are unknown (a deployed API named by URL only).
func (t *target) known(tb testing.TB) map[string]string {
	tb.Helper()
	t.limitsOnce.Do(func() {
		if _, ok := t.settings["MaxFacts"]; ok {
			return
		}
		s := maps.Clone(t.settings)
		if s == nil {
			s = map[string]string{}
		}
		r := t.api.Call(tb, http.MethodGet, "/v1/me/facts", t.userToken(tb, t.tenant, newID("limits")), nil)
		var body struct {
			Limits struct {
				MaxFacts     int `json:"maxFacts"`
				MaxFactChars int `json:"maxFactChars"`
			} `json:"limits"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &body) != nil {
			tb.Fatalf("GET /v1/me/facts for the limits = %d %s, want 200", r.Status, r.Body)
		}
		s["MaxFacts"], s["MaxFactChars"] = strconv.Itoa(body.Limits.MaxFacts), strconv.Itoa(body.Limits.MaxFactChars)
		t.settings = s
	})
	return t.settings
}

// describe says what the target runs with, of the parameters reqs name.
func (t *target) describe(reqs []requirement) string {
	var parts []string
	for _, r := range reqs {
		v, ok := t.settings[r.param]
		if !ok {
			v = "unknown (its parameters are read from USERMEMORY_STACK_NAME's stack, or from a local stack's state file)"
		}
		parts = append(parts, r.param+" "+v)
	}
	return strings.Join(parts, ", ")
}

// num returns the number setting param of the target.
func (t *target) num(tb testing.TB, param string) int {
	tb.Helper()
	n, err := strconv.Atoi(t.known(tb)[param])
	if err != nil {
		tb.Fatalf("%s: setting %s = %q, want a number", t.name, param, t.settings[param])
	}
	return n
}

// modelCalls returns how many calls the local Bedrock stand-in has
// answered; false on a deployed stack, whose model calls the suite cannot
// see.
func (t *target) modelCalls(tb testing.TB) (int, bool) {
	tb.Helper()
	if t.modelURL == "" {
		return 0, false
	}
	r, err := httpc.Get(t.modelURL + "/_control/calls")
	if err != nil {
		tb.Fatalf("the model stand-in's calls: %v", err)
	}
	defer r.Body.Close()
	var body struct {
		Count *int `json:"count"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Count == nil {
		tb.Fatalf("the model stand-in's calls: %d %v, want a count", r.StatusCode, err)
	}
	return *body.Count, true
}

// TestProfilesHoldTheBounds: every profile's settings are values the
// template admits, and together the profiles hold both bounds of each
// number setting of the edges (one past the value is refused),
// IdleReadSeconds at its lowest, extraction off and no pending category.
// It needs no target.
func TestProfilesHoldTheBounds(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(params map[string]string) error {
		return tmpl.Check(samtemplate.Options{Region: "us-east-1", Parameters: params})
	}
	held := map[string]bool{}
	for _, p := range profiles {
		if err := check(p.params); err != nil {
			t.Errorf("profile %s: %v", p.name, err)
		}
		for k, v := range p.params {
			n, err := strconv.Atoi(v)
			if err != nil {
				held[k+" "+v] = true
				continue
			}
			held[k+" lowest"] = held[k+" lowest"] || check(map[string]string{k: strconv.Itoa(n - 1)}) != nil
			held[k+" highest"] = held[k+" highest"] || check(map[string]string{k: strconv.Itoa(n + 1)}) != nil
		}
	}
	for _, want := range []string{"MaxFacts lowest", "MaxFacts highest", "MaxFactChars lowest", "MaxFactChars highest",
		"ExtractEveryTurns lowest", "ExtractEveryTurns highest", "IdleReadSeconds lowest", "ExtractionEnabled false", "PendingCategories none"} {
		if !held[want] {
			t.Errorf("no profile holds %s", want)
		}
	}
}
