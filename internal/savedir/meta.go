package savedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/fsguard"
	"github.com/arksave/arksave/vfs"
)

// The save's description for people and game menus: written after each
// commit, never read by a load (the manifest and the files it names are
// the save; these only describe it).
const (
	// MetaName is the save's readable metadata, JSON ([Meta]).
	MetaName = "meta.json"
	// ThumbnailName is the picture of the world the game gave at the last
	// save, a PNG.
	ThumbnailName = "thumbnail.png"
	// metaFormat is Meta.Format.
	metaFormat = "arksave-meta"
	// maxMetaSize is the most of meta.json a reader reads.
	maxMetaSize = 64 << 10
	// maxThumbnailSide bounds a thumbnail's width and height: a larger
	// picture is scaled down.
	maxThumbnailSide = 512
)

// Meta is the readable description of a save in meta.json.
type Meta struct {
	Format     string    `json:"format"`  // "arksave-meta"
	Version    int       `json:"version"` // 1
	Name       string    `json:"name"`
	Seed       uint64    `json:"seed"`
	Created    time.Time `json:"created"`
	LastSaved  time.Time `json:"last_saved"`
	PlayTimeMS int64     `json:"play_time_ms"`
	Generation uint64    `json:"generation"`
	// Thumbnail is ThumbnailName when the save has one.
	Thumbnail string `json:"thumbnail,omitempty"`
}

// PlayTime returns PlayTimeMS as a duration.
func (m *Meta) PlayTime() time.Duration { return time.Duration(m.PlayTimeMS) * time.Millisecond }

// MetaInput is what the game gives a save's description: the rest comes
// from the commit.
type MetaInput struct {
	Name     string
	PlayTime time.Duration
	// Thumbnail is a copy of the game's picture (CopyThumbnail), or nil.
	Thumbnail *image.NRGBA
}

// CopyThumbnail copies img into a picture of its own, scaled down (nearest
// pixel) to fit maxThumbnailSide; nil for nil or an empty picture. The
// game loop calls it: the game may change img afterwards.
func CopyThumbnail(img image.Image) *image.NRGBA {
	if img == nil || img.Bounds().Empty() {
		return nil
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	scale := max(1, (max(w, h)+maxThumbnailSide-1)/maxThumbnailSide)
	out := image.NewNRGBA(image.Rect(0, 0, (w+scale-1)/scale, (h+scale-1)/scale))
	for y := range out.Rect.Dy() {
		for x := range out.Rect.Dx() {
			out.Set(x, y, img.At(b.Min.X+x*scale, b.Min.Y+y*scale))
		}
	}
	return out
}

// writeMeta writes the description of the generation res committed into
// the writer's directory: the thumbnail first, then meta.json, each
// through a temp file and a rename. It runs between saves; a failure is
// logged and changes nothing else (the save is committed).
func (w *Writer) writeMeta(in *MetaInput, res *autosave.Result) {
	if in == nil || res.Err != nil {
		return
	}
	w.mu.RLock()
	d := w.dir
	w.mu.RUnlock()
	defer func() {
		if p := recover(); p != nil {
			w.log.Warn("save description not written", "dir", d.path, "err", NewPanicError(p))
		}
	}()
	if err := d.writeMeta(in, w.Seed()); err != nil {
		w.log.Warn("save description not written", "dir", d.path, "err", err)
	}
}

// Meta reads the description of the directory the writer holds (see
// ReadMeta).
func (w *Writer) Meta() (*Meta, error) {
	w.mu.RLock()
	d := w.dir
	w.mu.RUnlock()
	return ReadMeta(d.fs, d.path)
}

func (d *Dir) writeMeta(in *MetaInput, seed uint64) error {
	man := d.Manifest()
	if man == nil || d.writable() != nil {
		return nil
	}
	m := Meta{
		Format: metaFormat, Version: 1, Name: in.Name, Seed: seed,
		Created:    time.UnixMilli(man.CreatedMS).UTC(),
		LastSaved:  time.UnixMilli(man.ModifiedMS).UTC(),
		PlayTimeMS: in.PlayTime.Milliseconds(), Generation: man.Generation,
	}
	if in.Thumbnail != nil {
		var buf bytes.Buffer
		if err := png.Encode(&buf, in.Thumbnail); err != nil {
			return fmt.Errorf("encode the thumbnail: %w", err)
		}
		if err := d.writeAtomic(ThumbnailName, buf.Bytes()); err != nil {
			return err
		}
		m.Thumbnail = ThumbnailName
	} else if _, err := d.fs.Lstat(filepath.Join(d.path, ThumbnailName)); err == nil {
		// The game no longer gives one: the old picture would mislead.
		if err := d.remove(ThumbnailName); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	data, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return err
	}
	return d.writeAtomic(MetaName, append(data, '\n'))
}

// ReadMeta reads the description of the save in dir. A directory without
// one is an error matching fs.ErrNotExist; one that is not a regular file,
// larger than 64 KiB or not a description is an error matching
// autosave.ErrCorrupt naming it. It never reads anything but dir's
// meta.json.
func ReadMeta(fsys vfs.FS, dir string) (*Meta, error) {
	if fsys == nil {
		fsys = vfs.OS
	}
	p := filepath.Join(dir, MetaName)
	if err := fsguard.Regular(fsys, p, MetaName, autosave.ErrCorrupt); err != nil {
		return nil, err
	}
	data, err := vfs.ReadFileLimit(fsys, p, maxMetaSize)
	if errors.Is(err, vfs.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %s: a description is at most %d bytes: %v", autosave.ErrCorrupt, p, maxMetaSize, err)
	}
	if err != nil {
		return nil, err
	}
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", autosave.ErrCorrupt, p, err)
	}
	if m.Format != metaFormat || m.Version != 1 || (m.Thumbnail != "" && m.Thumbnail != ThumbnailName) || m.PlayTimeMS < 0 {
		return nil, fmt.Errorf("%w: %s: not an arksave save description of version 1 (format %q, version %d)", autosave.ErrCorrupt, p, m.Format, m.Version)
	}
	return &m, nil
}
