package arksave

import (
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/arksave/arksave/components"
)

// SetChunkData replaces the game's own extra data for the loaded chunk at
// pos (tile entities, a heightmap, a biome: bytes the plugin keeps with
// the chunk's pixels without looking into them; nil or empty for none, at
// most 16 MiB) and marks the chunk dirty when that changed it: the next
// save writes the chunk even when its pixels did not change, and the data
// comes back with the chunk when it is loaded again, in this process or
// another. A chunk that is not loaded is an error matching
// ErrChunkNotLoaded. It is [components.Chunk.SetData] followed by
// [components.ChunkState.MarkDirty].
func (p *Persistence) SetChunkData(pos components.ChunkPos, data []byte) error {
	return p.rt.SetChunkData(pos, data)
}

// ChunkData returns the extra data of the loaded chunk at pos, nil for
// none (do not modify it: a save may hold it; see
// [components.Chunk.Data]). A chunk that is not loaded is an error
// matching ErrChunkNotLoaded.
func (p *Persistence) ChunkData(pos components.ChunkPos) ([]byte, error) {
	return p.rt.ChunkData(pos)
}

// chunkValue is how SetChunkValue stores a value: the name of its type,
// so that a value of another type is refused, and the value.
type chunkValue[T any] struct {
	Type  string `msgpack:"t"`
	Value T      `msgpack:"v"`
}

// SetChunkValue stores v as the extra data of the loaded chunk at pos,
// encoded with msgpack (the codec arksave uses for self-describing values)
// under the name of its type; see [Persistence.SetChunkData]. T should be
// plain data (structs, numbers, strings, slices, maps): what msgpack
// brings back.
func SetChunkValue[T any](p *Persistence, pos components.ChunkPos, v T) error {
	b, err := msgpack.Marshal(chunkValue[T]{Type: typeName[T](), Value: v})
	if err != nil {
		return fmt.Errorf("arksave: SetChunkValue(%v) of %s: %w", pos, typeName[T](), err)
	}
	return p.SetChunkData(pos, b)
}

// ChunkValue decodes the extra data of the loaded chunk at pos as a value
// SetChunkValue stored. It returns false when the chunk has no extra data,
// and an error when the data is not a value of type T.
func ChunkValue[T any](p *Persistence, pos components.ChunkPos) (T, bool, error) {
	var zero T
	b, err := p.ChunkData(pos)
	if err != nil || b == nil {
		return zero, false, err
	}
	v, err := decodeChunkValue[T](b)
	if err != nil {
		return zero, false, fmt.Errorf("arksave: ChunkValue(%v): %w", pos, err)
	}
	return v, true, nil
}

// decodeChunkValue decodes what SetChunkValue stored for a T.
func decodeChunkValue[T any](b []byte) (T, error) {
	var v chunkValue[T]
	var zero T
	if err := msgpack.Unmarshal(b, &v); err != nil {
		return zero, fmt.Errorf("%w: chunk data as %s: %w", ErrCorrupt, typeName[T](), err)
	}
	if v.Type != typeName[T]() {
		return zero, fmt.Errorf("the chunk holds a %q, not a %s", v.Type, typeName[T]())
	}
	return v.Value, nil
}

func typeName[T any]() string {
	t := reflect.TypeFor[T]()
	if t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}
