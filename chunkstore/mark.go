package chunkstore

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/arksave/arksave/internal/pxsw"
)

// fileMark is the state of a store's files between commits, which
// revertTo takes them back to.
type fileMark = pxsw.Mark

// markFiles returns the state of the files now, for Revert: a save that commits
// the store and then fails at a later step (its world file, its manifest)
// takes the store back with it, so that failed saves never make the files
// grow.
func (s *Store) markFiles() (fileMark, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return fileMark{}, err
	}
	return s.mark()
}

func (s *Store) mark() (fileMark, error) {
	m := fileMark{Append: s.w, Newest: -1}
	main := s.files.main()
	var err error
	if m.Size, err = main.Size(); err != nil {
		return m, err
	}
	if err := readFull(main, m.Slots[:min(m.Size, dataStart)], 0); err != nil {
		return m, err
	}
	if localOf(s.w) > dataHeaderSize {
		if m.Newest, err = s.fileSize(fileOf(s.w)); err != nil {
			return m, err
		}
	}
	return m, nil
}

// undo takes the files back to m after a commit failed part way: it writes
// back a header slot the commit changed, then cuts what the commit
// appended and removes the data files it started. Best effort: when the
// slot cannot be written back, the records it may name stay. The in-memory
// state was never published, so only the append offset follows the files.
func (s *Store) undo(m fileMark) {
	if s.restore(m) == nil {
		s.setAppend(m.Append)
	}
}

// restore writes back the slots of m that differ from the store file's,
// syncs, then truncates the data file appended to back to its size at m,
// removes the data files started since (syncing the directory) and
// truncates the store file to its size at m.
func (s *Store) restore(m fileMark) error {
	main := s.files.main()
	var now [dataStart]byte
	size, err := main.Size()
	if err != nil {
		return err
	}
	if err := readFull(main, now[:min(size, dataStart)], 0); err != nil {
		return err
	}
	if !bytes.Equal(now[:], m.Slots[:]) {
		if err := writeAll(main, m.Slots[:min(m.Size, dataStart)], 0); err != nil {
			return err
		}
		if err := main.Sync(); err != nil {
			return err
		}
	}
	newest := fileOf(m.Append)
	removed := false
	var errs []error
	for _, n := range s.files.opened() {
		if n > newest || n == newest && m.Newest < 0 {
			errs = append(errs, s.files.remove(n))
			removed = true
		}
	}
	if m.Newest >= 0 {
		if f, err := s.files.get(newest); err != nil {
			errs = append(errs, err)
		} else if cur, err := f.Size(); err != nil {
			errs = append(errs, err)
		} else if cur > m.Newest {
			if err := f.Truncate(m.Newest); err == nil {
				errs = append(errs, f.Sync())
			} else {
				errs = append(errs, err)
			}
		}
	}
	if removed {
		errs = append(errs, s.cfg.FS.SyncDir(filepath.Dir(s.path)))
	}
	if size > m.Size {
		if err := main.Truncate(m.Size); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, main.Sync())
		}
	}
	return errors.Join(errs...)
}

// revertTo takes the files back to m, undoing every commit since: it writes
// back the header slots, syncs, truncates the data file appended to back
// to its size then, removes the data files started since and syncs again.
// Nothing a generation committed before m uses is touched, and a crash
// part way leaves the store opening at m's generations (the slots are
// restored before anything is cut). The store is closed afterwards, its
// state being newer than its files': reopen it at the generation needed.
func (s *Store) revertTo(m fileMark) error {
	err := s.close(func() error { return s.restore(m) })
	if err != nil && err != ErrClosed {
		return fmt.Errorf("chunkstore: revert %s: %w", s.path, err)
	}
	return err
}
