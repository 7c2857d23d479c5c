package chunkstore

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// rootInfo is what a root says of its generation.
type rootInfo = pxsw.RootInfo

// parseRootInfo checks and decodes a root: a header slot of either parity
// (magic, version, checksum, fields), as a save directory's manifest keeps
// it. It does not look at any file.
func parseRootInfo(root []byte) (rootInfo, error) {
	h, err := parseRoot(root)
	if err != nil {
		return rootInfo{}, fmt.Errorf("chunkstore: root: %w", err)
	}
	return h.info(), nil
}

func (h header) info() rootInfo {
	return rootInfo{
		FormatVersion: h.version,
		Generation:    h.generation, Chunks: h.chunkCount,
		ChunkSize: h.chunkSize, TileSize: h.tileSize, PixelSize: h.pixelSize,
		Seed: h.seed, GeneratorVersion: h.genVersion, Table: h.root,
		Created: time.Unix(h.created, 0).UTC(), Modified: time.Unix(h.modified, 0).UTC(),
	}
}

// findRoot returns the root of generation gen of the store at path, for
// save directories whose manifests predate roots (save format 1) and name a
// generation only by its number. When a valid header slot holds gen, that
// slot is the root. Otherwise the root is reconstructed from the file: the
// page table of gen is the newest table record written by gen or, when gen
// changed nothing, by the newest generation before it; the constants, seed
// and generator version come from the newest valid header slot (generation
// gen is assumed to share them), the chunk count from loading that table.
// The root is verified by loading its page table; a damaged one returns an
// error wrapping ErrCorrupt. It needs no Generator and opens the file
// (through fsys, nil meaning vfs.OS) read-only.
func findRoot(fsys vfs.FS, path string, gen uint64) ([]byte, error) {
	s, err := openStore(path, Options{FS: fsys, ReadOnly: true}, openNewest, 0)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	slots := make([]byte, dataStart)
	if err := readFull(s.files.main(), slots, 0); err == nil {
		for i := range slotCount {
			if h, err := parseHeader(slots[i*headerSize:], i); err == nil && h.generation == gen {
				hb := h.marshal()
				return hb[:], nil
			}
		}
	}
	if gen > s.hdr.generation {
		return nil, fmt.Errorf("%w: generation %d in %s: the newest is %d", ErrGenerationNotFound, gen, path, s.hdr.generation)
	}
	// The newest table record of the newest generation up to gen.
	type cand struct {
		gen uint64
		off int64
	}
	var cands []cand
	err = s.scanStore(storeOffset(MaxDataFiles, localMask), func(ev scanEvent) bool {
		if ev.bad == nil && ev.hdr.kind.IsTable() && ev.hdr.key <= gen {
			cands = append(cands, cand{ev.hdr.key, ev.off})
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("chunkstore: find root in %s: %w", path, err)
	}
	h := s.hdr
	h.generation, h.root = gen, 0
	h.version = 0 // the current format, unless the table found is a format 1 store's (below)
	if len(cands) > 0 {
		best := slices.MaxFunc(cands, func(a, b cand) int {
			return cmp.Or(cmp.Compare(a.gen, b.gen), cmp.Compare(a.off, b.off))
		})
		h.root = best.off
	}
	if fileOf(h.root) == 0 {
		h.version = OldestFormatVersion // records in the store file: format 1
	}
	t := newStore(path, s.cfg, s.files, h)
	if _, err := t.loadChain(h); err != nil {
		return nil, fmt.Errorf("chunkstore: find root of generation %d in %s: %w", gen, path, err)
	}
	h.chunkCount = uint32(t.chunks.Len())
	hb := h.marshal()
	return hb[:], nil
}

// newestGeneration reads only the header slots of the store file at path
// (through fsys, nil meaning vfs.OS) and returns the newest generation a
// valid one names, or 0 for a file with nothing after its slots (created
// and never committed to). A file with records but no valid slot returns
// an error wrapping ErrNoValidHeader.
func newestGeneration(fsys vfs.FS, path string) (uint64, error) {
	if fsys == nil {
		fsys = vfs.OS
	}
	f, err := openRegular(fsys, path, false)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	if size <= dataStart {
		return 0, nil
	}
	var slots [dataStart]byte
	if err := readFull(f, slots[:], 0); err != nil {
		return 0, err
	}
	var newest uint64
	valid := false
	var errs [slotCount]error
	for i := range slotCount {
		var h header
		if h, errs[i] = parseHeader(slots[i*headerSize:], i); errs[i] == nil {
			valid, newest = true, max(newest, h.generation)
		}
	}
	if !valid {
		return 0, fmt.Errorf("%w: %s: slot A: %w; slot B: %w", ErrNoValidHeader, path, errs[0], errs[1])
	}
	return newest, nil
}
