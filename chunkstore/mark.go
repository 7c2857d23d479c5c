package chunkstore

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
)

// A Mark is the state of a store's files between commits: the store file's
// size and header slots, where the next commit appends and the size of the
// data file it appends to. [Store.Revert] takes the files back to it.
type Mark struct {
	size   int64 // of the store file
	w      int64
	newest int64 // size of data file fileOf(w); -1 when it did not exist
	slots  [dataStart]byte
}

// Mark returns the state of the files now, for Revert: a save that commits
// the store and then fails at a later step (its world file, its manifest)
// takes the store back with it, so that failed saves never make the files
// grow.
func (s *Store) Mark() (Mark, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return Mark{}, err
	}
	return s.mark()
}

func (s *Store) mark() (Mark, error) {
	m := Mark{w: s.w, newest: -1}
	main := s.files.main()
	var err error
	if m.size, err = main.Size(); err != nil {
		return m, err
	}
	if err := readFull(main, m.slots[:min(m.size, dataStart)], 0); err != nil {
		return m, err
	}
	if localOf(s.w) > dataHeaderSize {
		if m.newest, err = s.fileSize(fileOf(s.w)); err != nil {
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
func (s *Store) undo(m Mark) {
	if s.restore(m) == nil {
		s.setAppend(m.w)
	}
}

// restore writes back the slots of m that differ from the store file's,
// syncs, then truncates the data file appended to back to its size at m,
// removes the data files started since (syncing the directory) and
// truncates the store file to its size at m.
func (s *Store) restore(m Mark) error {
	main := s.files.main()
	var now [dataStart]byte
	size, err := main.Size()
	if err != nil {
		return err
	}
	if err := readFull(main, now[:min(size, dataStart)], 0); err != nil {
		return err
	}
	if !bytes.Equal(now[:], m.slots[:]) {
		if err := writeAll(main, m.slots[:min(m.size, dataStart)], 0); err != nil {
			return err
		}
		if err := main.Sync(); err != nil {
			return err
		}
	}
	newest := fileOf(m.w)
	removed := false
	var errs []error
	for _, n := range s.files.opened() {
		if n > newest || n == newest && m.newest < 0 {
			errs = append(errs, s.files.remove(n))
			removed = true
		}
	}
	if m.newest >= 0 {
		if f, err := s.files.get(newest); err != nil {
			errs = append(errs, err)
		} else if cur, err := f.Size(); err != nil {
			errs = append(errs, err)
		} else if cur > m.newest {
			if err := f.Truncate(m.newest); err == nil {
				errs = append(errs, f.Sync())
			} else {
				errs = append(errs, err)
			}
		}
	}
	if removed {
		errs = append(errs, s.cfg.FS.SyncDir(filepath.Dir(s.path)))
	}
	if size > m.size {
		if err := main.Truncate(m.size); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, main.Sync())
		}
	}
	return errors.Join(errs...)
}

// Revert takes the files back to m, undoing every commit since: it writes
// back the header slots, syncs, truncates the data file appended to back
// to its size then, removes the data files started since and syncs again.
// Nothing a generation committed before m uses is touched, and a crash
// part way leaves the store opening at m's generations (the slots are
// restored before anything is cut). The store is closed afterwards, its
// state being newer than its files': reopen it at the generation needed.
func (s *Store) Revert(m Mark) error {
	err := s.close(func() error { return s.restore(m) })
	if err != nil && err != ErrClosed {
		return fmt.Errorf("chunkstore: revert %s: %w", s.path, err)
	}
	return err
}
