package savetool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// CopyOptions configure [Copy].
type CopyOptions struct {
	// Options.FS is the source's file system, Options.Progress reports the
	// bytes copied.
	Options
	// DstFS is the destination's file system; nil means the real one.
	DstFS vfs.FS
}

// CopyReport says what Copy copied.
type CopyReport struct {
	Generation uint64 // the committed generation, now the copy's
	Backups    int    // backed-up generations copied with it
	Files      int
	Bytes      int64
}

// copyBlock is how much of a file Copy reads and writes at a time.
const copyBlock = 1 << 20

// Copy copies the save at src, its committed generation and its backups,
// to dst, which must hold no save: a directory to a world in NATS
// JetStream, or back, or any location to any other. Every file the
// generations use (world files, chunk stores and their data files, players
// files) is copied byte for byte (the chunk stores' roots stay valid) and
// synced, and the
// manifest is written last, so dst holds either nothing committed or the
// whole copy. It reads src without its lock (a game may be saving into
// it: a commit during the copy makes it start over on the new generation)
// and holds dst's lock while it writes.
func Copy(src, dst string, o CopyOptions) (*CopyReport, error) {
	t, srcFS := newTracker(o.Options)
	dstFS := o.DstFS
	if dstFS == nil {
		dstFS = vfs.OS
	}
	if _, err := openSave(srcFS, src); err != nil {
		return nil, err
	}
	out, err := savedir.OpenDir(dstFS, dst)
	var locked *autosave.LockedError
	if errors.As(err, &locked) {
		return nil, inUseError{locked}
	}
	if err != nil {
		return nil, fmt.Errorf("savetool: copy to %s: %w", dst, err)
	}
	defer out.Close()
	if err := out.ReadOnly(); err != nil {
		return nil, fmt.Errorf("savetool: copy to %s: %w", dst, err)
	}
	if !out.IsEmpty() {
		return nil, fmt.Errorf("savetool: copy to %s: it already holds a save (or a save's files); copy into a new location", dst)
	}
	var rep *CopyReport
	err = savedir.ReadConsistent(srcFS, src, func(d *savedir.Dir) error {
		m := d.Manifest()
		if m == nil {
			return fmt.Errorf("savetool: copy %s: %w", src, d.ManifestErr())
		}
		backups := d.Backups()
		for _, p := range d.DamagedBackups() {
			if errors.Is(p.Err, fs.ErrPermission) {
				return fmt.Errorf("savetool: copy %s: its backups cannot be read: %w", src, p.Err)
			}
		}
		names := generationFiles(m)
		for _, b := range backups {
			names = append(names, path.Join(savedir.BackupDir, fmt.Sprintf("manifest-%d", b.Generation)))
			names = append(names, generationFiles(b)...)
		}
		seen := map[string]bool{}
		var files []string
		var total int64
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			files = append(files, n)
			p, err := d.File(n)
			if err != nil {
				return err
			}
			st, err := srcFS.Stat(p)
			if err != nil {
				return fmt.Errorf("savetool: copy %s: %s: %w", src, n, err)
			}
			total += st.Size()
		}
		man, err := d.File(savedir.ManifestName)
		if err != nil {
			return err
		}
		manifest, err := vfs.ReadFile(srcFS, man)
		if err != nil {
			return fmt.Errorf("savetool: copy %s: read manifest: %w", src, err)
		}
		t.begin("copying "+src, total)
		defer t.end()
		rep = &CopyReport{Generation: m.Generation, Backups: len(backups), Files: len(files) + 1}
		if len(backups) > 0 {
			if err := dstFS.MkdirAll(filepath.Join(dst, savedir.BackupDir)); err != nil {
				return fmt.Errorf("savetool: copy to %s: %w", dst, err)
			}
		}
		for _, n := range files {
			from, err := d.File(n)
			if err != nil {
				return err
			}
			to, err := out.File(n)
			if err != nil {
				return err
			}
			written, err := copyFile(srcFS, from, dstFS, to)
			if err != nil {
				return fmt.Errorf("savetool: copy %s to %s: %w", n, dst, err)
			}
			rep.Bytes += written
		}
		if err := dstFS.SyncDir(filepath.Join(dst, savedir.BackupDir)); err != nil && len(backups) > 0 {
			return fmt.Errorf("savetool: copy to %s: %w", dst, err)
		}
		to, err := out.File(savedir.ManifestName)
		if err != nil {
			return err
		}
		// The commit point of the copy: the manifest, atomically, last.
		if err := vfs.WriteFileAtomic(dstFS, to, manifest); err != nil {
			return fmt.Errorf("savetool: copy to %s: write manifest: %w", dst, err)
		}
		rep.Bytes += int64(len(manifest))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// copyFile copies a whole file and syncs the copy.
func copyFile(srcFS vfs.FS, from string, dstFS vfs.FS, to string) (int64, error) {
	in, err := srcFS.Open(from)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	size, err := in.Size()
	if err != nil {
		return 0, err
	}
	out, err := dstFS.Create(to)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(size, copyBlock))
	var off int64
	for off < size {
		n, err := in.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n > 0 {
			if _, werr := out.WriteAt(buf[:n], off); werr != nil {
				out.Close()
				return off, werr
			}
			off += int64(n)
		}
		if err != nil && !(errors.Is(err, io.EOF) && off == size) {
			out.Close()
			return off, err
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return off, err
	}
	return off, out.Close()
}

// generationFiles lists the files a generation uses besides its manifest:
// its world file, its chunk store and the store's data files, its players
// index and data file.
func generationFiles(m *savedir.Manifest) []string {
	names := append([]string{m.World.Name, m.Chunks.Name}, m.Chunks.Data...)
	if m.Players != nil {
		names = append(names, m.Players.Index.Name, m.Players.Data)
	}
	return names
}
