// Package ui is the fleet dashboard the coordinator serves at /ui/: plain
// HTML, CSS and JavaScript embedded in the binary (no build step). The page
// talks to the same origin's /v1 API with the bearer token the user enters,
// kept in the tab's sessionStorage. See DESIGN.md.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// csp allows only the page's own files and same-origin API calls: no
// inline script, no third-party origin, no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the dashboard's files; mount it with the /ui/ prefix
// stripped. The files need no auth: they hold no data.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	fileServer := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// Revalidate every load, so an upgraded coordinator serves its own page.
		h.Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	})
}
