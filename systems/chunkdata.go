package systems

import (
	"fmt"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/plugin"
)

// SetChunkData replaces the extra data of the loaded chunk at pos with a
// copy of data, and marks the chunk dirty when that changed it.
func (r *runner) SetChunkData(pos components.ChunkPos, data []byte) error {
	if r.closed {
		return r.closedErr("SetChunkData")
	}
	if len(data) > chunkstore.MaxExtra {
		return fmt.Errorf("arksave: SetChunkData(%v): %d bytes, at most %d", pos, len(data), chunkstore.MaxExtra)
	}
	e, ok := r.index.Get(pos)
	if !ok || !r.chunkMap.HasAll(e) {
		return fmt.Errorf("%w: SetChunkData(%v)", plugin.ErrChunkNotLoaded, pos)
	}
	_, ch, st := r.chunkMap.Get(e)
	if ch.SetData(data) {
		st.MarkDirty()
	}
	return nil
}

// ChunkData returns the extra data of the loaded chunk at pos (nil for
// none); the slice is the chunk's, not to be modified.
func (r *runner) ChunkData(pos components.ChunkPos) ([]byte, error) {
	if r.closed {
		return nil, r.closedErr("ChunkData")
	}
	e, ok := r.index.Get(pos)
	if !ok || !r.chunkMap.HasAll(e) {
		return nil, fmt.Errorf("%w: ChunkData(%v)", plugin.ErrChunkNotLoaded, pos)
	}
	_, ch, _ := r.chunkMap.Get(e)
	return ch.Data(), nil
}
