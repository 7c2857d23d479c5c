package savetool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
)

// StoredChunks lists what a generation of a save's chunk store holds, as
// data: every stored chunk and body set, with the store's constants,
// without pixels. ExportJSON writes it as "chunks".
type StoredChunks struct {
	Store            string `json:"store"`
	Generation       uint64 `json:"generation"`
	ChunkSize        uint16 `json:"chunk_size"`
	TileSize         uint16 `json:"tile_size"`
	Seed             uint64 `json:"seed"`
	GeneratorVersion uint32 `json:"generator_version"`
	// Axes is the number of axes of the store's chunk keys: 2 (x, y), 3
	// (x, y, z) or 4 (x, y, z, w).
	Axes   int          `json:"axes"`
	Chunks []ChunkEntry `json:"chunks"` // in page-table order: by y, then x (by w, z, y, x with 4 axes)
}

// ChunkEntry is one stored chunk, with its bodies.
type ChunkEntry struct {
	X int32 `json:"x"`
	Y int32 `json:"y"`
	// Key is the chunk's whole key, x, y, z (, w), in a store of 3 or 4
	// axes; a store of 2 has X and Y alone.
	Key        []int32     `json:"key,omitempty"`
	Type       string      `json:"type"`             // "empty", "delta", "full", "palette"; "none" when only bodies are stored
	Offset     int64       `json:"offset,omitempty"` // of its record in the store file
	Length     uint32      `json:"length,omitempty"` // of its record, header included
	Stored     uint32      `json:"stored,omitempty"` // payload bytes in the file
	Raw        uint32      `json:"raw,omitempty"`    // payload bytes decoded
	Compressed bool        `json:"compressed,omitempty"`
	Changed    int         `json:"changed,omitempty"` // delta chunks: pixels that differ from the generator's
	Palette    int         `json:"palette,omitempty"` // palette chunks: distinct pixels
	Extra      int         `json:"extra,omitempty"`   // bytes of the game's extra data for the chunk
	Bodies     []BodyEntry `json:"bodies,omitempty"`
	Error      string      `json:"error,omitempty"` // the record or the body block does not read
}

// BodyEntry is one stored pixel body, without its pixels.
type BodyEntry struct {
	ID              uint64  `json:"id"`
	X               float32 `json:"x"`
	Y               float32 `json:"y"`
	Rotation        float32 `json:"rotation"`
	VX              float32 `json:"vx"`
	VY              float32 `json:"vy"`
	AngularVelocity float32 `json:"angular_velocity"`
	Width           uint32  `json:"width"`
	Height          uint32  `json:"height"`
	OriginX         int32   `json:"origin_x"`
	OriginY         int32   `json:"origin_y"`
	Pixels          int     `json:"pixels"`    // pixels its shape holds
	Extension       int     `json:"extension"` // bytes of game data
}

// NewBodyEntry describes a pixel body as the export lists it: its
// transform, velocities and grid, without its pixels.
func NewBodyEntry(b *chunkstore.Body) BodyEntry {
	px := 0
	for _, in := range b.Shape {
		if in {
			px++
		}
	}
	return BodyEntry{ID: b.ID, X: b.X, Y: b.Y, Rotation: b.Rotation, VX: b.VX, VY: b.VY,
		AngularVelocity: b.AngularVelocity, Width: b.Width, Height: b.Height, OriginX: b.OriginX, OriginY: b.OriginY,
		Pixels: px, Extension: len(b.Extension)}
}

// StoredChunksOf lists the chunks and bodies of an open store. Damaged
// records are listed with their error.
func StoredChunksOf(s *chunkstore.Store, name string) *StoredChunks {
	cfg := s.Options()
	ix := &StoredChunks{Store: name, Generation: s.Generation(), ChunkSize: cfg.ChunkSize, TileSize: cfg.TileSize,
		Seed: cfg.Seed, GeneratorVersion: s.GeneratorVersion(), Axes: cfg.Axes, Chunks: []ChunkEntry{}}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Type == chunkstore.BodyBlock {
			n := len(ix.Chunks)
			if n == 0 || !slices.Equal(ix.Chunks[n-1].key(), entryKey(e.Key)) {
				ix.Chunks = append(ix.Chunks, ChunkEntry{X: e.Pos.X, Y: e.Pos.Y, Key: axesOf(e.Key), Type: "none"})
				n++
			}
			c := &ix.Chunks[n-1]
			blk, err := s.EntitiesKey(e.Key)
			if err != nil {
				c.Error = err.Error()
			}
			for i := range blk.Bodies {
				c.Bodies = append(c.Bodies, NewBodyEntry(&blk.Bodies[i]))
			}
			return true
		}
		c := ChunkEntry{X: e.Pos.X, Y: e.Pos.Y, Key: axesOf(e.Key), Type: e.Type.String(), Offset: e.Handle.Offset, Length: e.Handle.Length}
		if !e.Handle.IsZero() {
			if ri, err := storetool.Tool.RecordInfo(s, e.Handle); err != nil {
				c.Error = err.Error()
			} else {
				c.Stored, c.Raw, c.Compressed, c.Extra = ri.Stored, ri.Raw, ri.Compressed, ri.Extra
				if e.Type == chunkstore.Delta || e.Type == chunkstore.Palette {
					if raw, _, err := storetool.Tool.ReadRawKey(s, e.Key); err == nil {
						c.Changed, c.Palette = len(raw.Delta), len(raw.Palette)
					} else {
						c.Error = err.Error()
					}
				}
			}
		}
		ix.Chunks = append(ix.Chunks, c)
		return true
	})
	return ix
}

// axesOf returns the axes of k for ChunkEntry.Key: nil for a key of 2
// axes, which X and Y name.
func axesOf(k chunkstore.Key) []int32 {
	if k.Axes() <= 2 {
		return nil
	}
	return entryKey(k)
}

// entryKey returns every axis of k.
func entryKey(k chunkstore.Key) []int32 {
	a := make([]int32, k.Axes())
	for i := range a {
		a[i] = k.Axis(i)
	}
	return a
}

// key returns every axis of the entry's chunk key.
func (c *ChunkEntry) key() []int32 {
	if c.Key != nil {
		return c.Key
	}
	return []int32{c.X, c.Y}
}

// ExportJSON writes a generation of the save directory at dir (0: the
// committed one) as one JSON object:
//
//	{"generation": G, "manifest": {...}, "world": <archetype.ExportJSON>, "chunks": <StoredChunks>}
//
// The world needs no Go types of the game. A damaged world file or chunk
// store makes it return an error after writing what it could; the JSON is
// then incomplete.
//
// It takes no lock and changes nothing: it works while a game saves into
// the directory, on one consistent generation.
func ExportJSON(w io.Writer, dir string, gen uint64, o Options) error {
	fsys := o.fs()
	var m *savedir.Manifest
	var world []byte
	var s *chunkstore.Store
	var storeErr error
	err := readSave(fsys, dir, gen, func(d *savedir.Dir, gm *savedir.Manifest) error {
		m = gm
		var err error
		if world, err = d.ReadWorld(m); err != nil {
			return err
		}
		if world, err = plainPECS(world, o.Key); err != nil {
			return fmt.Errorf("%s: %w", m.World.Name, err)
		}
		s, storeErr = openGeneration(d, m, *inspectOptions(fsys, o.Key))
		if storeErr != nil && !d.Stale() {
			return nil // the world is written, then the store's error
		}
		return storeErr
	})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	man, err := json.MarshalIndent(m, "  ", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "{\n  \"generation\": %d,\n  \"manifest\": %s,\n  \"world\": ", m.Generation, man)
	if err := archetype.ExportJSON(bw, bytes.NewReader(world)); err != nil {
		bw.Flush()
		return fmt.Errorf("%s: %w", m.World.Name, err)
	}
	if storeErr != nil {
		bw.Flush()
		return fmt.Errorf("%s: %w", m.Chunks.Name, storeErr)
	}
	defer s.Close()
	ix, err := json.MarshalIndent(StoredChunksOf(s, m.Chunks.Name), "  ", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, ",\n  \"chunks\": %s\n}\n", ix)
	return bw.Flush()
}
