package mapserve

import (
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"mime"
	"path"
)

// web holds the page: plain HTML, CSS and JavaScript, no build step.
//
//go:embed web/index.html web/app.js web/style.css
var web embed.FS

// staticFile is one file of the page, ready to serve.
type staticFile struct {
	data        []byte
	contentType string
	etag        string
}

// staticFiles are the page's files by the path they are served at.
var staticFiles = func() map[string]staticFile {
	out := map[string]staticFile{}
	names, err := fs.Glob(web, "web/*")
	if err != nil {
		panic(err) // a bad pattern: a programming error
	}
	for _, name := range names {
		data, err := web.ReadFile(name)
		if err != nil {
			panic(err) // embedded files always read
		}
		h := fnv.New64a()
		h.Write(data)
		f := staticFile{data: data, contentType: mime.TypeByExtension(path.Ext(name)), etag: fmt.Sprintf(`"%016x"`, h.Sum64())}
		if path.Ext(name) == ".js" {
			f.contentType = "text/javascript; charset=utf-8"
		}
		out["/"+path.Base(name)] = f
	}
	out["/"] = out["/index.html"]
	return out
}()
