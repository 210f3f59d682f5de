package factapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/factapi"
)

// TestImportCalls checks the import calls against a server that answers
// as the import routes do: the POST's body and the Location it checks,
// the poll until the import is not queued, keep and discard all, and a
// problem's code.
func TestImportCalls(t *testing.T) {
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "POST /v1/me/imports":
			var in map[string]string
			b, _ := io.ReadAll(r.Body)
			if json.Unmarshal(b, &in) != nil || in["source"] != "ChatGPT" || in["text"] != "- Lives in Lisbon." {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"code":5380000000114}`))
				return
			}
			w.Header().Set("Location", "/v1/me/imports/imp-1-a")
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(`{"import":{"importId":"imp-1-a","source":"ChatGPT","status":"queued"}}`))
		case "GET /v1/me/imports/imp-1-a":
			status := "queued"
			if polls.Add(1) > 1 {
				status = "done"
			}
			w.Write([]byte(`{"import":{"importId":"imp-1-a","status":"` + status + `","proposed":1,"leftOut":{"secrets":1}},` +
				`"pending":[{"key":"home_city","value":"Lisbon","origin":"imported","sourceThreadId":"imp-1-a","evidence":"Lives in Lisbon."}],"replaces":{}}`))
		case "POST /v1/me/imports/imp-1-a/keep":
			w.Write([]byte(`{"kept":[{"key":"home_city","value":"Lisbon","origin":"imported"}]}`))
		case "DELETE /v1/me/imports/imp-1-a/pending":
			w.Write([]byte(`{"discarded":1}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := &factapi.Client{BaseURL: srv.URL, HTTP: srv.Client()}
	v := c.Import(t, "tok", "ChatGPT", "- Lives in Lisbon.")
	if v.ImportID != "imp-1-a" || v.Source != "ChatGPT" {
		t.Errorf("Import = %+v", v)
	}
	st := c.WaitImport(t, "tok", v.ImportID, 5*time.Second)
	if st.Import.Status != "done" || polls.Load() != 2 || st.Import.LeftOut["secrets"] != 1 || st.Pending[0].Evidence != "Lives in Lisbon." {
		t.Errorf("WaitImport = %+v after %d polls, want done after 2", st, polls.Load())
	}
	if kept := c.KeepImport(t, "tok", v.ImportID); len(kept) != 1 || kept[0].Origin != "imported" {
		t.Errorf("KeepImport = %+v", kept)
	}
	if n := c.DiscardImport(t, "tok", v.ImportID); n != 1 {
		t.Errorf("DiscardImport = %d, want 1", n)
	}
	r := c.Call(t, http.MethodPost, "/v1/me/imports", "tok", map[string]string{"text": "x"})
	if got := factapi.ProblemCode(r); got != "5380000000114" {
		t.Errorf("ProblemCode = %q, want 5380000000114", got)
	}
	if got := factapi.ProblemCode(factapi.Response{Body: []byte("not json")}); got != "" {
		t.Errorf("ProblemCode of no problem = %q, want empty", got)
	}
}
