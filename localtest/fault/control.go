package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// SpecJSON is a Spec on the wire: durations as Go writes them ("10s",
// "800ms").
type SpecJSON struct {
	Kind     Kind   `json:"kind"`
	For      string `json:"for,omitempty"`
	Requests int    `json:"requests,omitempty"`
	Delay    string `json:"delay,omitempty"`
}

func (s Spec) json() SpecJSON {
	j := SpecJSON{Kind: s.Kind, Requests: s.Requests}
	if s.For > 0 {
		j.For = s.For.String()
	}
	if s.Delay > 0 {
		j.Delay = s.Delay.String()
	}
	return j
}

// Spec returns the Spec j stands for; the error names a malformed
// duration.
func (j SpecJSON) Spec() (Spec, error) {
	s := Spec{Kind: j.Kind, Requests: j.Requests}
	for _, d := range []struct {
		raw string
		dst *time.Duration
	}{{j.For, &s.For}, {j.Delay, &s.Delay}} {
		if d.raw == "" {
			continue
		}
		v, err := time.ParseDuration(d.raw)
		if err != nil {
			return Spec{}, fmt.Errorf("fault: %q is not a duration (10s, 800ms)", d.raw)
		}
		*d.dst = v
	}
	return s, nil
}

// Control serves the control API of injectors, by service name:
//
//	GET    /faults            the Status of every injector
//	PUT    /faults/{service}  set a fault: a SpecJSON body
//	DELETE /faults/{service}  end the service's fault
//	DELETE /faults            end every fault
//
// A bad request is a 400 or 404 {"error": …}.
func Control(injectors ...*Injector) http.Handler {
	byName := map[string]*Injector{}
	for _, in := range injectors {
		byName[in.svc.Name] = in
	}
	names := slices.Sorted(maps.Keys(byName))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, _ *http.Request) {
		out := make([]Status, 0, len(names))
		for _, n := range names {
			out = append(out, byName[n].Status())
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("DELETE /faults", func(w http.ResponseWriter, _ *http.Request) {
		for _, in := range byName {
			in.Clear()
		}
		w.WriteHeader(http.StatusNoContent)
	})
	one := func(w http.ResponseWriter, r *http.Request) *Injector {
		in, ok := byName[r.PathValue("service")]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no service %q: one of %s", r.PathValue("service"), strings.Join(names, ", "))})
		}
		return in
	}
	mux.HandleFunc("PUT /faults/{service}", func(w http.ResponseWriter, r *http.Request) {
		in := one(w, r)
		if in == nil {
			return
		}
		var j SpecJSON
		dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
		dec.DisallowUnknownFields()
		err := dec.Decode(&j)
		var s Spec
		if err == nil {
			s, err = j.Spec()
		}
		if err == nil {
			err = in.Set(s)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, in.Status())
	})
	mux.HandleFunc("DELETE /faults/{service}", func(w http.ResponseWriter, r *http.Request) {
		if in := one(w, r); in != nil {
			in.Clear()
			w.WriteHeader(http.StatusNoContent)
		}
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Client calls the control API that [Control] serves at URL (the local
// stack's Info.FaultURL).
type Client struct {
	URL  string
	HTTP *http.Client // nil means http.DefaultClient
}

// Set sets fault s on service and returns its status.
func (c Client) Set(ctx context.Context, service string, s Spec) (Status, error) {
	body, _ := json.Marshal(s.json())
	var st Status
	return st, c.do(ctx, http.MethodPut, "/"+service, body, &st)
}

// Clear ends the fault of service, or of every service for "".
func (c Client) Clear(ctx context.Context, service string) error {
	path := ""
	if service != "" {
		path = "/" + service
	}
	return c.do(ctx, http.MethodDelete, path, nil, nil)
}

// Status returns the status of every service.
func (c Client) Status(ctx context.Context) ([]Status, error) {
	var out []Status
	return out, c.do(ctx, http.MethodGet, "", nil, &out)
}

func (c Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s", e.Error)
		}
		return fmt.Errorf("fault: %s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
