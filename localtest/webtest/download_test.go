package webtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// TestDownloadMyData: the page's "Download my data" button saves a JSON
// file holding the user's facts and forgotten keys, as the export route
// answers them, and says what it saved.
func TestDownloadMyData(t *testing.T) {
	user := "page-dora"
	tok := tokenFor(t, user, false)
	for k, v := range map[string]string{"name": "Dora", "home_city": "Porto", "pet": "a parrot"} {
		if status, body := api(t, tok, http.MethodPut, "/v1/me/facts/"+k, fmt.Sprintf(`{"value":%q}`, v)); status != http.StatusOK {
			t.Fatalf("PUT %s: %d %v", k, status, body)
		}
	}
	if status, _ := api(t, tok, http.MethodDelete, "/v1/me/facts/pet", ""); status != http.StatusNoContent {
		t.Fatalf("forget pet: %d", status)
	}
	ctx, _ := browser(t)
	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	run1(t, ctx, "open", chromedp.Navigate(st.Info.PageURL+"/#token="+tok))
	waitText(t, ctx, "#caps", "2 of 30 facts")
	run1(t, ctx, "download", chromedp.Click(chromedp.CSS("#download")))
	waitText(t, ctx, "#status", "Downloaded 2 facts and 1 forgotten key.")
	shot(t, ctx, "10-downloaded")

	var doc struct {
		Format    int    `json:"format"`
		UserID    string `json:"userId"`
		Facts     []struct{ Key, Value string }
		Forgotten []struct{ Key string }
	}
	raw := downloaded(t, dir)
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the downloaded file %s: %v", raw, err)
	}
	got := map[string]string{}
	for _, f := range doc.Facts {
		got[f.Key] = f.Value
	}
	if doc.Format != 1 || doc.UserID != user || len(got) != 2 || got["name"] != "Dora" || got["home_city"] != "Porto" ||
		len(doc.Forgotten) != 1 || doc.Forgotten[0].Key != "pet" {
		t.Errorf("the downloaded file holds %s, want Dora's two facts and pet forgotten", raw)
	}
}

// downloaded waits for the one finished .json file in dir and returns it.
func downloaded(t *testing.T, dir string) []byte {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(names) == 1 && strings.HasPrefix(filepath.Base(names[0]), "my-memory-") && strings.HasSuffix(names[0], ".json") {
			if b, err := os.ReadFile(names[0]); err == nil && len(b) > 0 {
				return b
			}
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	t.Fatalf("no downloaded my-memory-….json in %v", names)
	return nil
}
