package chunkstore

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// The chunk dictionary: a chunk or body record whose payload equals one the
// store holds is not written again; the new entry points at the existing
// record. Every record kind and size takes part (Full, Delta and body
// records; a Delta or body record shared between positions is read against
// the position of the entry that points at it). It pays for common
// payloads: uniform chunks, regions painted with one material, the same
// structure placed many times.
//
// The dictionary remembers live records only: a record leaves it when the
// last entry that points at it goes, so that no entry ever points again at
// a record that compaction may have dropped or that sits in a data file
// the save directory has removed.
const dictMaxEntries = 1 << 16 // distinct payloads it remembers

// dict maps payload hashes to records and counts references to the records
// that may be shared. Records outside refs are referenced by at most one
// index entry, which keeps the live-byte accounting exact without a
// counter per record.
type dict struct {
	seed   maphash.Seed
	byHash map[uint64]handle
	refs   map[int64]dictRef // record offset -> its hash and the index entries that point at it
}

// dictRef is what the dictionary knows of a record: its payload's hash
// and the index entries that point at it (one in first, the others in
// more), so that a compaction finds every entry of a shared record.
type dictRef struct {
	hash  uint64
	n     int32
	first tkey
	more  map[tkey]struct{}
}

// keys returns the entries that point at the record.
func (r dictRef) keys() []tkey {
	if r.n == 0 {
		return nil
	}
	out := make([]tkey, 0, r.n)
	out = append(out, r.first)
	for k := range r.more {
		out = append(out, k)
	}
	return out
}

func newDict() dict {
	return dict{seed: maphash.MakeSeed(), byHash: map[uint64]handle{}, refs: map[int64]dictRef{}}
}

// sharable reports whether records of kind take part: every chunk and body
// record, of any size.
func sharable(kind recordKind) bool { return !kind.IsTable() }

// hash covers what makes two records interchangeable: raw size, kind,
// codec, flags and what follows the header; not the position key.
func (d *dict) hash(rec []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(d.seed)
	h.Write(rec[4:8])
	h.Write(rec[16 : recordFlagsOff+1])
	h.Write(sealedPayload(rec))
	return h.Sum64()
}

// track starts counting the references to the record at h, whose payload
// has hash, by the entries keys, and remembers it for sharing when index
// is set and there is room.
func (d *dict) track(h handle, hash uint64, keys []tkey, index bool) {
	r := dictRef{hash: hash}
	for _, k := range keys {
		r.addKey(k)
	}
	d.refs[h.Offset] = r
	if _, taken := d.byHash[hash]; index && !taken && len(d.byHash) < dictMaxEntries {
		d.byHash[hash] = h
	}
}

func (r *dictRef) addKey(k tkey) {
	if r.n == 0 {
		r.first = k
	} else {
		if r.more == nil {
			r.more = map[tkey]struct{}{}
		}
		r.more[k] = struct{}{}
	}
	r.n++
}

func (r *dictRef) dropKey(k tkey) {
	switch {
	case r.n == 1:
	case r.first == k:
		for m := range r.more {
			r.first = m
			break
		}
		delete(r.more, r.first)
	default:
		delete(r.more, k)
	}
	r.n--
}

// add counts the entry k pointing at the record at h. It reports whether
// the record was not referenced before (its bytes become live).
func (d *dict) add(h handle, k tkey) (first bool) {
	r, ok := d.refs[h.Offset]
	if !ok {
		return true
	}
	r.addKey(k)
	d.refs[h.Offset] = r
	return r.n == 1
}

// drop counts the entry k pointing at the record at h no more. It reports
// whether that was the last (its bytes are dead); a record no entry points
// at leaves the dictionary.
func (d *dict) drop(h handle, k tkey) (last bool) {
	r, ok := d.refs[h.Offset]
	if !ok {
		return true
	}
	if r.n > 1 {
		r.dropKey(k)
		d.refs[h.Offset] = r
		return false
	}
	delete(d.refs, h.Offset)
	if cur, ok := d.byHash[r.hash]; ok && cur.Offset == h.Offset {
		delete(d.byHash, r.hash)
	}
	return true
}

// move carries what the dictionary knows of the record at from over to its
// copy at to (a compaction moved it), with no references yet: the moved
// entries add theirs.
func (d *dict) move(from, to handle) {
	r, ok := d.refs[from.Offset]
	if !ok {
		return
	}
	d.refs[to.Offset] = dictRef{hash: r.hash}
	if cur, ok := d.byHash[r.hash]; ok && cur.Offset == from.Offset {
		d.byHash[r.hash] = to
	}
}

// samePayload reports whether two sealed records are interchangeable.
func samePayload(a, b []byte) bool {
	return len(a) == len(b) && bytes.Equal(a[4:8], b[4:8]) && bytes.Equal(a[16:recordFlagsOff+1], b[16:recordFlagsOff+1]) &&
		bytes.Equal(sealedPayload(a), sealedPayload(b))
}

// sealedPayload returns what a sealed record holds after its header (the
// parts its flags announce and its payload): not the key bytes after it.
func sealedPayload(rec []byte) []byte {
	return rec[recordHeaderSize : recordHeaderSize+int(binary.LittleEndian.Uint32(rec))]
}
