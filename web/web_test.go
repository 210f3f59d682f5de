package web_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
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
		{"/config.json", "application/json", `{"apiUrl":"http://127.0.0.1:3000","maxImportChars":` + strconv.Itoa(memory.MaxImportChars) + `}`},
		{"/import.js", "text/javascript", "/v1/me/imports"},
		{"/import-prompts.json", "application/json", "third person"},
		{"/", "text/html", "What I remember about you"},
		{"/app.js", "text/javascript", "Intl.DateTimeFormat"},
		{"/signin.js", "text/javascript", "code_challenge_method"},
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
		for k, v := range web.SecurityHeaders() {
			if resp.Header.Get(k) != v {
				t.Errorf("GET %s: %s = %q, want %q", c.path, k, resp.Header.Get(k), v)
			}
		}
	}
}

// TestPolicyOfTheHeaderIsThePages: the Content-Security-Policy header has
// every directive of index.html's meta element, as it is written there,
// and frame-ancestors 'none', which only a header can set.
func TestPolicyOfTheHeaderIsThePages(t *testing.T) {
	src, err := fs.ReadFile(web.Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), `<meta http-equiv="Content-Security-Policy" content="`)
	meta, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		t.Fatal("index.html has no Content-Security-Policy meta element")
	}
	directives := func(p string) []string {
		var out []string
		for d := range strings.SplitSeq(p, ";") {
			out = append(out, strings.Join(strings.Fields(d), " "))
		}
		slices.Sort(out)
		return out
	}
	want := directives(meta + "; frame-ancestors 'none'")
	if got := directives(web.ContentSecurityPolicy); !slices.Equal(got, want) {
		t.Errorf("the header's policy is %q, want index.html's %q and frame-ancestors 'none'", got, want)
	}
}

// TestConfigJSON: the page's configuration leaves out what is not set,
// so that the deployed page, which names no API URL, takes its own origin.
func TestConfigJSON(t *testing.T) {
	for _, c := range []struct {
		cfg  web.Config
		want string
	}{
		{web.Config{}, `{`},
		{web.Config{APIURL: "http://127.0.0.1:3000"}, `{"apiUrl":"http://127.0.0.1:3000",`},
		{web.Config{AuthURL: "https://x.auth.eu-west-1.amazoncognito.com", ClientID: "c", Scope: "memory/user"},
			`{"authUrl":"https://x.auth.eu-west-1.amazoncognito.com","clientId":"c","scope":"memory/user",`},
		{web.Config{APIURL: "http://127.0.0.1:3000", TokenCommand: "go run ./localtest token --tenant acme --user ana"},
			`{"apiUrl":"http://127.0.0.1:3000","tokenCommand":"go run ./localtest token --tenant acme --user ana",`},
	} {
		// Every config.json ends with the service's import limit.
		want := c.want + `"maxImportChars":` + strconv.Itoa(memory.MaxImportChars) + `}`
		if got := string(c.cfg.JSON()); got != want {
			t.Errorf("%+v: %s, want %s", c.cfg, got, want)
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

// TestImportPrompts: the page and the chat have a prompt for ChatGPT,
// Claude and Gemini, and one for any other assistant; a source is matched
// without regard to case, an unknown one gets the other assistants'.
func TestImportPrompts(t *testing.T) {
	prompts := web.ImportPrompts()
	for _, source := range []string{"ChatGPT", "Claude", "Gemini", ""} {
		if len(prompts[source]) < 100 {
			t.Errorf("the prompt for %q is %q", source, prompts[source])
		}
	}
	if len(prompts) != 4 {
		t.Errorf("%d prompts, want ChatGPT's, Claude's, Gemini's and another assistant's", len(prompts))
	}
	if web.ImportPrompt("chatgpt") != prompts["ChatGPT"] || web.ImportPrompt("Le Chat") != prompts[""] {
		t.Error("ImportPrompt does not match the source without case, or has no prompt for another assistant")
	}
	if prompts["ChatGPT"] == prompts["Claude"] || prompts["Claude"] == prompts["Gemini"] {
		t.Error("two sources share one prompt")
	}
}
