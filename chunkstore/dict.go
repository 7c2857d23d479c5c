package chunkstore

import (
	"bytes"
	"hash/maphash"
)

// The chunk dictionary: a Full record whose payload equals one
// already in the file is not written again; the new entry points at the
// existing record. It pays for small, common payloads such as uniform
// chunks (an all-stone 512x512 chunk compresses to about 4 KiB), so only
// records up to dictMaxRecord bytes take part.
const (
	dictMaxRecord  = 16 << 10 // largest record the dictionary shares
	dictMaxEntries = 1 << 14  // distinct payloads it remembers
)

// dict maps payload hashes to records and counts references to the records
// that may be shared. Records outside refs are referenced by at most one
// index entry, which keeps the live-byte accounting exact without a
// counter per record.
type dict struct {
	seed   maphash.Seed
	byHash map[uint64]Handle
	refs   map[int64]int32 // record offset -> index entries that point at it
}

func newDict() dict {
	return dict{seed: maphash.MakeSeed(), byHash: map[uint64]Handle{}, refs: map[int64]int32{}}
}

func sharable(kind RecordKind, length int) bool {
	return kind == RecordFull && length <= dictMaxRecord
}

// hash covers what makes two records interchangeable: raw size, kind,
// codec and payload; not the position key.
func (d *dict) hash(rec []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(d.seed)
	h.Write(rec[4:8])
	h.Write(rec[16:18])
	h.Write(rec[recordHeaderSize:])
	return h.Sum64()
}

// samePayload reports whether two sealed records are interchangeable.
func samePayload(a, b []byte) bool {
	return len(a) == len(b) && bytes.Equal(a[4:8], b[4:8]) && bytes.Equal(a[16:18], b[16:18]) &&
		bytes.Equal(a[recordHeaderSize:], b[recordHeaderSize:])
}
