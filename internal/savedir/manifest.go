package savedir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/arksave/arksave/autosave"
)

// Names of the files in a save directory. They are part of the save format.
const (
	ManifestName = "manifest"    // the commit point
	BackupDir    = "backups"     // older generations kept for restore
	ChunksName   = "chunks.pxsw" // the chunk store of a new save

	manifestFormat = "arksave-save"
)

// ManifestVersion is the manifest format version this package writes.
//
// Format history (this package reads every version listed; arksave
// migrate rewrites older ones as a new generation of the current one):
//
//   - 1: generation, world file (name, size, CRC32-C), chunk store (name and
//     generation). The store generation is opened through the header slot
//     that holds it, which works only while no later commit of the store
//     has reused that slot.
//   - 2: the chunk store reference also carries the root of its generation
//     (StoreRef.Root, a copy of its 64-byte header slot), and it is
//     required: any generation, a backup's included, reopens through it
//     however far the store has moved on.
//   - 3: the players (PlayersRef: the players index of the generation, with
//     size and CRC32-C, and the players data file), when the save has any;
//     the chunk store reference also names the data files its generation
//     uses (StoreRef.Data), and a file no manifest or backup names is
//     removed.
const ManifestVersion = 3

// OldestManifestVersion is the oldest manifest format version this package
// reads: 1, which has no chunk store roots.
const OldestManifestVersion = 1

// manifestVersion1 has no chunk store roots.
const manifestVersion1 = OldestManifestVersion

// manifestVersionData is the first version whose chunk store reference
// names data files.
const manifestVersionData = 3

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Manifest is the commit point of a save directory: the generation and the
// files that make it up, each with its size and checksum. It is JSON, so
// that a person can read it; its own CRC32-C guards it.
type Manifest struct {
	Format string `json:"format"`
	// Version is the manifest format version it was written in (see
	// ManifestVersion); a manifest is written again in its own version.
	Version    int      `json:"version"`
	Generation uint64   `json:"generation"`
	CreatedMS  int64    `json:"created_ms"`
	ModifiedMS int64    `json:"modified_ms"`
	World      FileRef  `json:"world"`
	Chunks     StoreRef `json:"chunks"`
	// Players names the players of the generation (version 3); nil when
	// the save has none.
	Players *PlayersRef `json:"players,omitempty"`
	// Checksum is the CRC32-C of the manifest encoded with Checksum = 0.
	Checksum uint32 `json:"crc32c"`
}

// FileRef names a file of the save, relative to the save directory.
type FileRef struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
}

// StoreRef names the chunk store and the generation of it that belongs to
// this save generation. Root is the store's description of that generation
// (its header slot), so that an older generation can be reopened from a
// backup while the store has moved on. Data names the data files that
// generation uses (chunkstore.Store.DataFileNames), in number order: the
// files of the store a save directory keeps (format 3; a store of format 1
// has none).
type StoreRef struct {
	Name       string   `json:"name"`
	Generation uint64   `json:"generation"`
	Root       []byte   `json:"root,omitempty"`
	Data       []string `json:"data,omitempty"`
}

// CompactedChunksName returns the file name of a chunk store written by the
// compaction that produced generation g. Older chunk stores stay as long as
// a backup needs them.
func CompactedChunksName(g uint64) string { return fmt.Sprintf("chunks-%d.pxsw", g) }

// BackupChunksName returns the file name of a chunk store that a repair at
// generation g writes for the generation of backup b whose own store is
// damaged; n > 1 tells copies apart should an earlier repair have taken
// the name.
func BackupChunksName(g, b uint64, n int) string {
	if n > 1 {
		return fmt.Sprintf("chunks-%d-backup-%d-%d.pxsw", g, b, n)
	}
	return fmt.Sprintf("chunks-%d-backup-%d.pxsw", g, b)
}

// WorldName returns the file name of the ECS world of generation g.
func WorldName(g uint64) string { return fmt.Sprintf("world-%d.pecs", g) }

// Encode returns the canonical form of m, in m's version (the current one
// when unset), with its checksum: the bytes Commit writes. Tools and tests
// write manifests with it; a manifest whose names do not have their
// fields' forms is still refused when it is read.
func (m *Manifest) Encode() []byte { return m.encode() }

// encode returns the canonical form of m, in m's version (the current one
// when unset).
func (m *Manifest) encode() []byte {
	c := *m
	if c.Version == 0 {
		c.Version = ManifestVersion
	}
	c.Format, c.Checksum = manifestFormat, 0
	body, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		panic(err) // a struct of plain fields always marshals
	}
	c.Checksum = crc32.Checksum(body, castagnoli)
	out, _ := json.MarshalIndent(&c, "", "  ")
	return append(out, '\n')
}

// decodeManifest parses and verifies a manifest: the committed one, or
// with backup set one in backups/. Besides its checksum, every name it
// holds must have its field's form (see checkManifestNames).
func decodeManifest(data []byte, backup bool) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %w", autosave.ErrCorrupt, err)
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("%w: manifest: format %q, want %q", autosave.ErrCorrupt, m.Format, manifestFormat)
	}
	switch {
	case m.Version > ManifestVersion:
		return nil, fmt.Errorf("%w: manifest version %d, this build reads 1 to %d", autosave.ErrVersion, m.Version, ManifestVersion)
	case m.Version < manifestVersion1:
		return nil, fmt.Errorf("%w: manifest: version %d", autosave.ErrCorrupt, m.Version)
	}
	want := m.Checksum
	m.Checksum = 0
	c := m
	body, _ := json.MarshalIndent(&c, "", "  ")
	if got := crc32.Checksum(body, castagnoli); got != want {
		return nil, fmt.Errorf("%w: manifest: crc32c %08x, want %08x", autosave.ErrCorrupt, got, want)
	}
	if !bytes.Equal(data, (&m).encode()) {
		return nil, fmt.Errorf("%w: manifest: not in canonical form", autosave.ErrCorrupt)
	}
	if m.Version >= 2 && len(m.Chunks.Root) == 0 {
		return nil, fmt.Errorf("%w: manifest version %d without a chunk store root", autosave.ErrCorrupt, m.Version)
	}
	if err := checkManifestNames(&m, backup); err != nil {
		return nil, err
	}
	m.Checksum = want
	return &m, nil
}
