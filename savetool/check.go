package savetool

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// Check verifies a save directory, a PECS world file (.pecs) or a chunk
// store file (.pxsw) without the game: every checksum and every reference
// between the files (see [autosave.CheckDir] and [chunkstore.Store.Check]).
// It collects every problem. The error is for a path that cannot be
// checked at all (missing, or a file of another kind). It takes no lock and
// changes nothing: it works while a game saves into the directory.
func Check(path string, o Options) (*autosave.CheckReport, error) {
	t, fsys := newTracker(o)
	st, err := fsys.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w; check the path", err)
	}
	if st.IsDir() {
		t.begin("checking "+filepath.Base(path), checkEstimate(fsys, path))
		defer t.end()
		return autosave.CheckDir(fsys, path, chunkstore.Options{}), nil
	}
	r := &autosave.CheckReport{}
	name := filepath.Base(path)
	t.begin("checking "+name, 2*st.Size())
	defer t.end()
	switch {
	case strings.HasSuffix(path, ".pecs"):
		r.Worlds++
		data, err := vfs.ReadFile(fsys, path)
		if err == nil {
			_, err = archetype.ReadInfo(bytes.NewReader(data))
		}
		if err != nil {
			r.Problems = append(r.Problems, autosave.Problem{File: name, Offset: -1, Err: err})
		}
	case strings.HasSuffix(path, ".pxsw"):
		rep := chunkstore.CheckFile(fsys, path)
		if rep.Slots > 0 {
			r.Stores++
		}
		for _, p := range rep.Problems {
			r.Problems = append(r.Problems, autosave.Problem{File: name, Offset: p.Offset, Chunk: p.Pos,
				Err: fmt.Errorf("%s: %w", p.Section, p.Err)})
		}
	default:
		return nil, fmt.Errorf("%s: not a save directory, .pecs or .pxsw file", path)
	}
	return r, nil
}

// checkEstimate guesses the bytes a directory check reads: each world file
// once, each chunk store about twice (a scan of every record, then every
// live record decoded) for each generation that names it.
func checkEstimate(fsys vfs.FS, dir string) int64 {
	d, err := autosave.OpenDirReadOnly(fsys, dir)
	if err != nil {
		return 0
	}
	gens := d.Backups()
	if m := d.Manifest(); m != nil {
		gens = append(gens, m)
	}
	var n int64
	size := func(name string) int64 {
		p, err := d.File(name)
		if err != nil {
			return 0
		}
		return fileSize(fsys, p)
	}
	for _, m := range gens {
		n += m.World.Size + 2*size(m.Chunks.Name)
	}
	if d.Manifest() == nil {
		for _, s := range storeFiles(fsys, dir) {
			n += 2 * size(s)
		}
	}
	return n
}
