package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/web"
)

// TestHandler: the page's files and its configuration, with the headers
// that keep the token out of referrers and the types unsniffed. The page
// itself is tested in a browser by localtest/webtest.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(web.Handler("http://127.0.0.1:3000"))
	defer srv.Close()
	for _, c := range []struct{ path, contentType, want string }{
		{"/config.json", "application/json", `{"apiUrl":"http://127.0.0.1:3000"}`},
		{"/", "text/html", "What I remember about you"},
		{"/app.js", "text/javascript", "Intl.DateTimeFormat"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.contentType) || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s: %d %s, body without %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.want)
		}
		if c.path != "/config.json" && (resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("GET %s: headers %v, want no-referrer and nosniff", c.path, resp.Header)
		}
	}
}
