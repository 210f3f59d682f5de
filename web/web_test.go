package web_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/memory"
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

// TestCategoryNames: the page names every special category the service
// may give a pending fact, and no other.
func TestCategoryNames(t *testing.T) {
	src, err := fs.ReadFile(web.Files(), "app.js")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(src), "const categoryNames = {")
	block, _, ok2 := strings.Cut(block, "};")
	if !ok || !ok2 {
		t.Fatal("app.js has no categoryNames object")
	}
	var got []string
	for _, m := range regexp.MustCompile(`(\w+): "`).FindAllStringSubmatch(block, -1) {
		got = append(got, m[1])
	}
	want := slices.Clone(memory.Categories)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the page names the categories %v, the service has %v", got, want)
	}
}
