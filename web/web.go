// Package web holds the "What I remember about you" page: one static page
// (HTML, CSS and JavaScript, no build step) that frontends copy or serve,
// and that the local stack serves at its own URL.
package web

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Files returns the page's files: index.html, app.js, style.css and
// favicon.svg.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // The embedded folder is fixed at build time.
	}
	return sub
}

// Handler serves the page and, at /config.json, {"apiUrl": apiURL} so that
// the page knows where the fact API is.
func Handler(apiURL string) http.Handler {
	mux := http.NewServeMux()
	cfg, _ := json.Marshal(map[string]string{"apiUrl": apiURL}) // A map of strings always marshals.
	mux.HandleFunc("GET /config.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(cfg)
	})
	files := http.FileServerFS(Files())
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	}))
	return mux
}
