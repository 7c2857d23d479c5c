package chunkstore

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
)

// verify checks what a load of the store's generation trusts, reading each
// live record once and decoding none: the data files the generation uses
// (present, the store's, as long as its records run), its page table
// (every record of the chain and every entry), and the header and CRC32-C
// of every live chunk and body record, in file order. Every byte of those
// is under a checksum, so it finds whatever the disk did to them; what it
// leaves to [Store.Check] is decoding the payloads and reading dead
// records. A record whose checksums hold but which does not decode (a
// writer's fault, not the disk's) is reported by the read that meets it,
// as any damaged record is: that chunk regenerates. A record that several
// entries share (identical chunks stored once) is read once and a damage
// reported under each of them.
func (s *Store) verify() Report { return s.checking(s.verifyLive) }

// verifyLive is verify's work, under the commit lock.
func (s *Store) verifyLive(r *Report) bool {
	s.checkFilesInto(r, s.fileList())
	s.checkTable(r)
	var live []toolEntry
	r.Types = map[StorageType]int{}
	s.entries(func(e toolEntry) bool {
		r.Types[e.Type]++
		if !e.Handle.IsZero() {
			live = append(live, e)
		}
		return true
	})
	slices.SortStableFunc(live, func(a, b toolEntry) int { return cmp.Compare(a.Handle.Offset, b.Handle.Offset) })
	// Reading is a copy out of the page cache or the disk, and checking a
	// CRC32-C: split the records into runs, one per core.
	parts := min(runtime.GOMAXPROCS(0), max(1, len(live)/verifyRun))
	found := make([]Report, parts)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[i] = s.verifyRecords(live[i*len(live)/parts : (i+1)*len(live)/parts])
		}()
	}
	wg.Wait()
	for _, f := range found {
		r.Records += f.Records
		r.Problems = append(r.Problems, f.Problems...)
	}
	return true
}

// verifyRun is the fewest records a goroutine of verify reads.
const verifyRun = 512

// verifyRecords reads the records of live (sorted by offset) and checks
// them, each once; it reports a damaged one under every entry that uses it.
func (s *Store) verifyRecords(live []toolEntry) Report {
	var r Report
	var buf []byte
	var err error
	for i, e := range live {
		if i == 0 || e.Handle.Offset != live[i-1].Handle.Offset {
			var rec []byte
			_, rec, err = s.readAs(e.Handle, e.Type, buf)
			if rec != nil {
				buf = rec
			}
			r.Records++
		}
		if err != nil {
			r.addKey(sectionOf(e.Type), e.Handle.Offset, e.Key, err)
		}
	}
	return r
}

// sectionOf is the report section of a record of storage type t: a body
// block's, or a chunk's.
func sectionOf(t StorageType) string {
	if t == BodyBlock {
		return SectionBodies
	}
	return SectionChunk
}
