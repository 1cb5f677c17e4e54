package web

import (
	"embed"
	"mime"
	"net/http"
	"path"
)

// The web view: one page, a script and a style sheet, embedded so the
// binary serves them with nothing else installed and no network.
//
//go:embed assets/index.html assets/app.js assets/login.js assets/style.css
var assets embed.FS

// serveAsset answers with one embedded file.
func serveAsset(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			writeError(w, http.StatusNotFound, "no asset "+name)
			return
		}
		w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
		w.Write(b)
	}
}
