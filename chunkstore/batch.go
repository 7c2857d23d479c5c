package chunkstore

import "slices"

// Batch collects chunk and body changes for one Commit. The last change
// to a position wins. A Batch is not safe for concurrent use.
type Batch struct {
	chunks map[Pos]batchChunk
	bodies map[Pos]EntityBlock
}

type batchChunk struct {
	pix []uint32
	src PixelSource // instead of pix
	del bool
}

// PixelSource supplies a chunk's pixels when Commit encodes that chunk,
// for [Batch.PutChunkFrom]. A save of many chunks then holds one chunk of
// pixels per compression goroutine instead of a copy of every chunk, and a
// source can hand its pixels over at the moment they are read.
type PixelSource interface {
	// ReadPixels fills dst (ChunkSize*ChunkSize pixels, row-major). Commit
	// calls it at most once per Commit, on one of its compression
	// goroutines, concurrently with the other sources of the batch. An
	// error fails the Commit.
	ReadPixels(dst []uint32) error
}

// NewBatch returns an empty batch for s.
func (s *Store) NewBatch() *Batch {
	return &Batch{chunks: map[Pos]batchChunk{}, bodies: map[Pos]EntityBlock{}}
}

// PutChunk stores pix (ChunkSize*ChunkSize pixels, row-major) at pos. The
// batch keeps the slice: the caller must not modify it until Commit
// returns. A chunk identical to generation under PersistMask is not stored
// (a stored one at pos is removed).
func (b *Batch) PutChunk(pos Pos, pix []uint32) { b.chunks[pos] = batchChunk{pix: pix} }

// PutChunkFrom stores the pixels src supplies at pos, as PutChunk does; src
// is read while Commit compresses, not before.
func (b *Batch) PutChunkFrom(pos Pos, src PixelSource) { b.chunks[pos] = batchChunk{src: src} }

// DeleteChunk removes the chunk at pos: it reads as generated again.
func (b *Batch) DeleteChunk(pos Pos) { b.chunks[pos] = batchChunk{del: true} }

// PutBodies replaces the pixel bodies kept with the chunk at pos. Empty
// bodies (no Shape bit set) are dropped; nil or no non-empty body removes
// the chunk's bodies. The batch keeps the slice and what it points to
// until Commit returns.
func (b *Batch) PutBodies(pos Pos, bodies []Body) { b.bodies[pos] = EntityBlock{Bodies: bodies} }

// PutEntities replaces what is kept with the chunk at pos besides its
// pixels: its pixel bodies and its entity sections (see [EntityBlock]). A
// block with no non-empty body and no section removes them. The batch keeps
// the slices until Commit returns. PutEntities and PutBodies replace each
// other's change at pos.
func (b *Batch) PutEntities(pos Pos, blk EntityBlock) { b.bodies[pos] = blk }

// Len returns the number of positions the batch changes (chunks and body
// sets counted apart).
func (b *Batch) Len() int { return len(b.chunks) + len(b.bodies) }

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	clear(b.chunks)
	clear(b.bodies)
}

// sortedPos returns the keys of m in page-table order.
func sortedPos[V any](m map[Pos]V) []Pos {
	ps := make([]Pos, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, comparePos)
	return ps
}
