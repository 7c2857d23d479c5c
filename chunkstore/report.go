package chunkstore

import (
	"errors"
	"fmt"
	"strings"
)

// Sections named in a Problem.
const (
	SectionHeader = "header"      // a header slot
	SectionTable  = "page table"  // a journal segment or checkpoint, or one of its entries
	SectionRecord = "data region" // a chunk or body record, or bytes between records
	SectionChunk  = "chunk"       // a chunk whose record does not decode, or was dropped
	SectionBodies = "bodies"      // a chunk's body block that does not decode
)

// Problem is one damaged or dropped item: what, where and why.
type Problem struct {
	Section string // one of the Section constants
	Offset  int64  // file offset of the damaged bytes
	Pos     *Pos   // the chunk concerned, when known
	Err     error  // what is wrong; matches ErrCorrupt for damage
}

// String describes the problem on one line.
func (p Problem) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at offset %d", p.Section, p.Offset)
	if p.Pos != nil {
		fmt.Fprintf(&b, ", chunk %v", *p.Pos)
	}
	fmt.Fprintf(&b, ": %v", p.Err)
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
	return fmt.Errorf("chunkstore: %d problems found: %w", len(r.Problems), errors.Join(errs...))
}

// String lists the problems, one a line, then "N problems found".
func (r Report) String() string {
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%d problems found (%d slots, %d table records, %d entries, %d records checked)",
		len(r.Problems), r.Slots, r.Tables, r.Entries, r.Records)
	return b.String()
}

func (r *Report) add(section string, off int64, err error) {
	r.Problems = append(r.Problems, Problem{Section: section, Offset: off, Err: err})
}

func (r *Report) addPos(section string, off int64, pos Pos, err error) {
	r.Problems = append(r.Problems, Problem{Section: section, Offset: off, Pos: &pos, Err: err})
}

// problemError is a Problem as an error that unwraps to its cause.
type problemError struct{ p Problem }

func (e problemError) Error() string { return e.p.String() }
func (e problemError) Unwrap() error { return e.p.Err }
