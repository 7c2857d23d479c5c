package chunkstore

import (
	"bytes"
	"fmt"
)

// A Mark is the state of a store's file between commits: its size, its
// header slots and where the next commit appends. [Store.Revert] takes the
// file back to it.
type Mark struct {
	size  int64
	w     int64
	slots [dataStart]byte
}

// Mark returns the state of the file now, for Revert: a save that commits
// the store and then fails at a later step (its world file, its manifest)
// takes the store back with it, so that failed saves never make the file
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
	m := Mark{w: s.w}
	var err error
	if m.size, err = s.f.Size(); err != nil {
		return m, err
	}
	if err := readFull(s.f, m.slots[:min(m.size, dataStart)], 0); err != nil {
		return m, err
	}
	return m, nil
}

// undo takes the file back to m after a commit failed part way: it writes
// back a header slot the commit changed, then cuts what the commit
// appended. Best effort: when the slot cannot be written back, the records
// it may name stay. The in-memory state was never published, so only the
// append offset follows the file.
func (s *Store) undo(m Mark) {
	if s.restore(m) == nil {
		s.w = m.w
	}
}

// restore writes back the slots of m that differ from the file's, syncs,
// truncates the file to m's size and syncs again.
func (s *Store) restore(m Mark) error {
	var now [dataStart]byte
	size, err := s.f.Size()
	if err != nil {
		return err
	}
	if err := readFull(s.f, now[:min(size, dataStart)], 0); err != nil {
		return err
	}
	if !bytes.Equal(now[:], m.slots[:]) {
		if err := writeAll(s.f, m.slots[:min(m.size, dataStart)], 0); err != nil {
			return err
		}
		if err := s.f.Sync(); err != nil {
			return err
		}
	}
	if size > m.size {
		if err := s.f.Truncate(m.size); err != nil {
			return err
		}
		return s.f.Sync()
	}
	return nil
}

// Revert takes the file back to m, undoing every commit since: it writes
// back the header slots, syncs, truncates the file to its size then and
// syncs again. Nothing a generation committed before m uses is touched,
// and a crash part way leaves the file opening at m's generations (the
// slots are restored before anything is cut). The store is closed
// afterwards, its state being newer than its file's: reopen it at the
// generation needed.
func (s *Store) Revert(m Mark) error {
	err := s.close(func() error { return s.restore(m) })
	if err != nil && err != ErrClosed {
		return fmt.Errorf("chunkstore: revert %s: %w", s.path, err)
	}
	return err
}
