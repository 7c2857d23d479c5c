package chunkstore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arksave/arksave/internal/words"
)

// Sections named in a Problem.
const (
	SectionHeader = "header"      // a header slot
	SectionTable  = "page table"  // a journal segment or checkpoint, or one of its entries
	SectionRecord = "data region" // a chunk or body record, or bytes between records
	SectionChunk  = "chunk"       // a chunk whose record does not decode, or was dropped
	SectionBodies = "bodies"      // a chunk's body block that does not decode
	SectionFile   = "data file"   // a data file that is missing, cut short or not the store's
)

// Problem is one damaged or dropped item: where it is and what is wrong.
// It is the one problem type of the module: a chunk store's [Report], a
// save directory's check (package savetool) and the damage a game meets
// while loading chunks (arksave.Problem) all list Problems.
type Problem struct {
	File    string // the file, relative to the save directory; empty for a store checked on its own
	Section string // the part of the file, one of the Section constants for a chunk store; empty when not known
	Offset  int64  // file offset of the damaged bytes; -1 when not about a place in the file
	Pos     *Pos   // the chunk concerned, when known, in a store of 2 axes
	Key     *Key   // the chunk concerned, when known, in a store of any axes (Key.Pos() is *Pos)
	Err     error  // what is wrong; matches ErrCorrupt (and arksave.ErrCorrupt) for damage
}

// String describes the problem on one line: "file: section at offset N,
// chunk (x, y): error", leaving out what is not known, and the offset when
// the error names it.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
	}
	sep := func(s string) {
		if b.Len() > 0 {
			b.WriteString(s)
		}
	}
	section := p.Section
	if section == SectionChunk && (p.Pos != nil || p.Key != nil) {
		section = "" // "chunk (x, y)" follows
	}
	if section != "" {
		sep(": ")
		b.WriteString(section)
	}
	// The offset is left out here when the error names it already.
	if p.Offset >= 0 && (p.Err == nil || !strings.Contains(p.Err.Error(), fmt.Sprintf("offset %d", p.Offset))) {
		if section != "" {
			b.WriteByte(' ')
		} else {
			sep(": ")
		}
		fmt.Fprintf(&b, "at offset %d", p.Offset)
	}
	if p.Key != nil || p.Pos != nil {
		if b.Len() == len(p.File) {
			sep(": ")
		} else {
			sep(", ")
		}
		if p.Key != nil {
			fmt.Fprintf(&b, "chunk %v", *p.Key)
		} else {
			fmt.Fprintf(&b, "chunk %v", *p.Pos)
		}
	}
	sep(": ")
	fmt.Fprintf(&b, "%v", p.Err)
	return b.String()
}

// Report lists every problem found, not only the first, and what was
// looked at.
type Report struct {
	Problems []Problem

	Slots   int // header slots in use
	Tables  int // page-table records (checkpoint and journal segments) read
	Entries int // index entries checked
	Records int // records read (by a scan or through entries)
	// Types counts the index entries checked by storage type: chunks by
	// how they are stored (Empty, Delta, Full, Palette), and BodyBlock.
	Types map[StorageType]int
	// Encrypted counts the live chunk and body records stored encrypted
	// (Options.Key) that a store opened without the key checked as stored
	// only: their checksums match, their content could not be decoded
	// without the key (which is not damage).
	Encrypted int
	// WrongKey counts the live encrypted records that are intact as stored
	// but do not decrypt with Options.Key: the key is not the one they
	// were written with (not damage either; their content is not
	// verified).
	WrongKey int
	// Zstd counts the live records checked that are stored as zstd
	// (archived by a compaction with Options.ZstdArchive), each once.
	Zstd int
}

// typeCounts lists Types as "2 delta, 1 palette, ..." in storage type
// order, or "" when no entry was checked.
func typeCounts(types map[StorageType]int) string {
	var parts []string
	for t := Empty; t <= Palette; t++ {
		if n := types[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, t))
		}
	}
	return strings.Join(parts, ", ")
}

// OK reports whether no problem was found.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Err returns nil when the report is OK, else an error that lists every
// problem and matches each problem's error with errors.Is.
func (r Report) Err() error {
	if r.OK() {
		return nil
	}
	errs := make([]error, len(r.Problems))
	for i, p := range r.Problems {
		errs[i] = problemError{p}
	}
	return fmt.Errorf("chunkstore: %s found: %w", words.Count(len(r.Problems), "problem", "problems"), errors.Join(errs...))
}

// String lists the problems, one a line, then "N problems found".
func (r Report) String() string {
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s found (%s, %s, %s, %s checked)",
		words.Count(len(r.Problems), "problem", "problems"), words.Count(r.Slots, "slot", "slots"), words.Count(r.Tables, "table record", "table records"),
		words.Count(r.Entries, "entry", "entries"), words.Count(r.Records, "record", "records"))
	return b.String()
}

func (r *Report) add(section string, off int64, err error) {
	r.Problems = append(r.Problems, Problem{Section: section, Offset: off, Err: err})
}

func (r *Report) addKey(section string, off int64, k Key, err error) {
	p := Problem{Section: section, Offset: off, Key: &k, Err: err}
	if k.n == 2 {
		pos := k.Pos()
		p.Pos = &pos
	}
	r.Problems = append(r.Problems, p)
}

// problemError is a Problem as an error that unwraps to its cause.
type problemError struct{ p Problem }

func (e problemError) Error() string { return e.p.String() }
func (e problemError) Unwrap() error { return e.p.Err }
