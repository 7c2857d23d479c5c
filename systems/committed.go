package systems

import (
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/snapshot"
)

// chunkVersion identifies what a save committed of one chunk.
type chunkVersion struct {
	Pos     components.ChunkPos
	Version uint64
}

// entityVersion identifies what a save committed of one chunk's entities.
type entityVersion struct {
	Pos     components.ChunkPos
	Version uint64
	Hash    uint64
	Merge   bool // the set was merged into the stored one
}

// playerHash identifies what a save committed of one player.
type playerHash struct {
	ID   string
	Hash uint64 // 0: the record was removed
}

// committedOf lists what the snapshot holds, for confirming chunk states,
// entity versions and player records once the save has committed.
func committedOf(s *snapshot.Snapshot) ([]chunkVersion, []entityVersion, []playerHash) {
	cv := make([]chunkVersion, len(s.Chunks))
	for i, c := range s.Chunks {
		cv[i] = chunkVersion{Pos: c.Pos, Version: c.Version}
	}
	ev := make([]entityVersion, len(s.Entities))
	for i, e := range s.Entities {
		ev[i] = entityVersion{Pos: e.Pos, Version: e.Version, Hash: e.Hash, Merge: e.Merge}
	}
	ph := make([]playerHash, len(s.Players))
	for i, p := range s.Players {
		ph[i] = playerHash{ID: p.ID, Hash: p.Hash}
	}
	return cv, ev, ph
}
