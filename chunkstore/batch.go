package chunkstore

import "slices"

// Batch collects chunk and body changes for one Commit. The last change
// to a position wins. A Batch is not safe for concurrent use.
type Batch struct {
	chunks map[Key]batchChunk
	bodies map[Key]EntityBlock
}

type batchChunk struct {
	pix   []uint32
	src   PixelSource // instead of pix
	extra []byte
	del   bool
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
	return &Batch{chunks: map[Key]batchChunk{}, bodies: map[Key]EntityBlock{}}
}

// PutChunk stores pix (ChunkSize*ChunkSize pixels, row-major) at pos. The
// batch keeps the slice: the caller must not modify it until Commit
// returns. A chunk identical to generation in its persisted layers is not stored
// (a stored one at pos is removed).
func (b *Batch) PutChunk(pos Pos, pix []uint32) { b.PutChunkKey(pos.Key(), pix) }

// PutChunkKey is PutChunk at a key of the store's axes (see
// [Options.Axes]); Commit refuses a key of other axes with ErrAxes.
func (b *Batch) PutChunkKey(k Key, pix []uint32) { b.chunks[k] = batchChunk{pix: pix} }

// PutChunkExtra stores pix at pos as PutChunk does, with extra: the game's
// own data for the chunk (tile entities, a heightmap, a biome; at most
// [MaxExtra] bytes), saved in the chunk's record and returned by
// [Store.GetExtra]. A chunk with extra data is stored even where its pixels
// are as generated; nil or empty extra is PutChunk. The batch keeps the
// slice.
func (b *Batch) PutChunkExtra(pos Pos, pix []uint32, extra []byte) {
	b.PutChunkExtraKey(pos.Key(), pix, extra)
}

// PutChunkExtraKey is PutChunkExtra at a key of the store's axes.
func (b *Batch) PutChunkExtraKey(k Key, pix []uint32, extra []byte) {
	b.chunks[k] = batchChunk{pix: pix, extra: extra}
}

// ExtraSource is a PixelSource that also supplies the chunk's extra data
// (see [Batch.PutChunkExtra]); [Batch.PutChunkFrom] asks for it when the
// source implements it.
type ExtraSource interface {
	PixelSource
	// ChunkExtra returns the chunk's extra data, nil or empty for none.
	// Commit calls it once, after ReadPixels, on the same goroutine.
	ChunkExtra() []byte
}

// PutChunkFrom stores the pixels src supplies at pos, as PutChunk does; src
// is read while Commit compresses, not before.
func (b *Batch) PutChunkFrom(pos Pos, src PixelSource) { b.PutChunkFromKey(pos.Key(), src) }

// PutChunkFromKey is PutChunkFrom at a key of the store's axes.
func (b *Batch) PutChunkFromKey(k Key, src PixelSource) { b.chunks[k] = batchChunk{src: src} }

// DeleteChunk removes the chunk at pos: it reads as generated again.
func (b *Batch) DeleteChunk(pos Pos) { b.DeleteChunkKey(pos.Key()) }

// DeleteChunkKey is DeleteChunk at a key of the store's axes.
func (b *Batch) DeleteChunkKey(k Key) { b.chunks[k] = batchChunk{del: true} }

// PutEntities replaces what is kept with the chunk at pos besides its
// pixels: its pixel bodies and its entity sections (see [EntityBlock]). A
// block with no non-empty body and no section removes them; empty bodies
// (no Shape bit set) are dropped. The batch keeps the slices and what they
// point to until Commit returns.
func (b *Batch) PutEntities(pos Pos, blk EntityBlock) { b.PutEntitiesKey(pos.Key(), blk) }

// PutEntitiesKey is PutEntities at a key of the store's axes.
func (b *Batch) PutEntitiesKey(k Key, blk EntityBlock) { b.bodies[k] = blk }

// Len returns the number of positions the batch changes (chunks and body
// sets counted apart).
func (b *Batch) Len() int { return len(b.chunks) + len(b.bodies) }

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	clear(b.chunks)
	clear(b.bodies)
}

// sortedKeys returns the keys of m in page-table order.
func sortedKeys[V any](m map[Key]V) []Key {
	ks := make([]Key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, compareKeys)
	return ks
}
