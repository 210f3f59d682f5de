package factapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/producer"
)

// TestClient checks what the client sends: the bearer token, a JSON body
// with its content type, the path under the base URL; and that it reads
// the facts and values back.
func TestClient(t *testing.T) {
	stored := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		switch r.Method {
		case http.MethodPut:
			var in struct{ Value string }
			b, _ := io.ReadAll(r.Body)
			if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &in) != nil {
				http.Error(w, "want a JSON body", http.StatusBadRequest)
				return
			}
			stored[r.URL.Path[len("/api/v1/me/facts/"):]] = in.Value
			w.Write([]byte(`{}`))
		case http.MethodGet:
			if r.Header.Get("Content-Type") != "" {
				http.Error(w, "a GET has no body", http.StatusBadRequest)
				return
			}
			var out struct {
				Facts []factapi.Fact `json:"facts"`
			}
			for k, v := range stored {
				out.Facts = append(out.Facts, factapi.Fact{Key: k, Value: v})
			}
			json.NewEncoder(w).Encode(out)
		}
	}))
	defer srv.Close()
	c := &factapi.Client{BaseURL: srv.URL + "/api/", HTTP: srv.Client()}

	c.Put(t, "tok", "city", "Lisbon")
	if got := factapi.Values(c.Facts(t, "/v1/me/facts", "tok")); len(got) != 1 || got["city"] != "Lisbon" {
		t.Errorf("facts after the PUT = %v, want city Lisbon", got)
	}
	if r := c.Call(t, http.MethodGet, "/v1/me/facts", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("a call without a token = %d %s, want the server's 401", r.Status, r.Body)
	}
}

func TestTurns(t *testing.T) {
	got := factapi.Turns("hi", "hello", "bye")
	want := []producer.Turn{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "hello"}, {Role: "user", Text: "bye"}}
	if !slices.Equal(got, want) {
		t.Errorf("Turns = %v, want %v", got, want)
	}
}
