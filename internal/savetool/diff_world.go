package savetool

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/savedir"
)

// diffPlayers compares the players of ma and mb into rep: an entry of
// both indexes with the same record (the same bytes by length and
// CRC-32C) is the same player, unread; one whose record differs is read
// in both, so that a damaged record is reported as such.
func diffPlayers(d *savedir.Dir, ma, mb *savedir.Manifest, rep *DiffReport) {
	pa, errA := d.ReadPlayers(ma)
	pb, errB := d.ReadPlayers(mb)
	if badA, badB := rep.damage(ma.Generation, "players index", errA), rep.damage(mb.Generation, "players index", errB); badA || badB {
		return
	}
	var ea, eb []savedir.PlayerEntry
	if pa != nil {
		ea = pa.Entries
	}
	if pb != nil {
		eb = pb.Entries
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		switch {
		case j == len(eb) || i < len(ea) && ea[i].ID < eb[j].ID:
			rep.Players = append(rep.Players, PlayerChange{ID: ea[i].ID, Kind: ChangeRemoved})
			i++
		case i == len(ea) || eb[j].ID < ea[i].ID:
			rep.Players = append(rep.Players, PlayerChange{ID: eb[j].ID, Kind: ChangeAdded})
			j++
		default:
			x, y := ea[i], eb[j]
			i, j = i+1, j+1
			if x.Length == y.Length && x.CRC32C == y.CRC32C {
				continue
			}
			_, errA := d.ReadPlayer(pa, x.ID)
			_, errB := d.ReadPlayer(pb, y.ID)
			what := fmt.Sprintf("player %q", x.ID)
			if badA, badB := rep.damage(ma.Generation, what, errA), rep.damage(mb.Generation, what, errB); !badA && !badB {
				rep.Players = append(rep.Players, PlayerChange{ID: x.ID, Kind: ChangeChanged})
			}
		}
	}
}

// worldDoc is the part of a world file's JSON export a diff reads.
type worldDoc struct {
	Tables []struct {
		Relations json.RawMessage              `json:"relations"`
		Entities  []map[string]json.RawMessage `json:"entities"`
	} `json:"tables"`
	Resources map[string]json.RawMessage `json:"resources"`
}

// readWorldDoc reads a world file's bytes through its JSON export,
// without the game's types.
func readWorldDoc(m *savedir.Manifest, data, key []byte) (*worldDoc, error) {
	data, err := plainPECS(data, key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.World.Name, err)
	}
	var js bytes.Buffer
	if err := archetype.ExportJSON(&js, bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%s: %w", m.World.Name, err)
	}
	var doc worldDoc
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		return nil, fmt.Errorf("%s: its JSON export does not read: %w", m.World.Name, err)
	}
	return &doc, nil
}

// entities returns the world's entities by [id, generation], each with
// its components' JSON by name and its table's relation targets.
func (w *worldDoc) entities() map[[2]uint32]map[string][]byte {
	out := map[[2]uint32]map[string][]byte{}
	for _, t := range w.Tables {
		rel := []byte(t.Relations)
		for _, e := range t.Entities {
			var id [2]uint32
			if json.Unmarshal(e["entity"], &id) != nil {
				continue
			}
			comps := make(map[string][]byte, len(e))
			for n, v := range e {
				if n != "entity" {
					comps[n] = v
				}
			}
			if len(rel) > 0 && string(rel) != "{}" {
				comps[" relations"] = rel
			}
			out[id] = comps
		}
	}
	return out
}

// diffWorld compares the world files of ma and mb into rep. (Their size
// and CRC-32C in the manifests do not tell them apart: a world file ends
// with the CRC-32C of what precedes it, and the CRC-32C of any such file
// is the same.)
func diffWorld(d *savedir.Dir, ma, mb *savedir.Manifest, rep *DiffReport, key []byte) {
	da, errA := d.ReadWorld(ma)
	db, errB := d.ReadWorld(mb)
	if errA == nil && errB == nil && bytes.Equal(da, db) {
		return
	}
	var wa, wb *worldDoc
	if errA == nil {
		wa, errA = readWorldDoc(ma, da, key)
	}
	if errB == nil {
		wb, errB = readWorldDoc(mb, db, key)
	}
	if errors.Is(errA, archetype.ErrEncrypted) || errors.Is(errB, archetype.ErrEncrypted) {
		rep.WorldEncrypted = true
		return
	}
	if badA, badB := rep.damage(ma.Generation, "world file", errA), rep.damage(mb.Generation, "world file", errB); badA || badB {
		return
	}
	a, b := wa.entities(), wb.entities()
	for id, x := range a {
		y, ok := b[id]
		if !ok {
			rep.World = append(rep.World, WorldChange{Entity: id, Kind: ChangeRemoved})
		} else if ch := diffComponents(x, y); len(ch) > 0 {
			rep.World = append(rep.World, WorldChange{Entity: id, Kind: ChangeChanged, Components: ch})
		}
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			rep.World = append(rep.World, WorldChange{Entity: id, Kind: ChangeAdded})
		}
	}
	slices.SortFunc(rep.World, func(p, q WorldChange) int {
		return cmp.Or(cmp.Compare(p.Entity[0], q.Entity[0]), cmp.Compare(p.Entity[1], q.Entity[1]))
	})
	for n, v := range wa.Resources {
		if w, ok := wb.Resources[n]; !ok {
			rep.Resources = append(rep.Resources, ResourceChange{Name: n, Kind: ChangeRemoved})
		} else if !bytes.Equal(v, w) {
			rep.Resources = append(rep.Resources, ResourceChange{Name: n, Kind: ChangeChanged})
		}
	}
	for n := range wb.Resources {
		if _, ok := wa.Resources[n]; !ok {
			rep.Resources = append(rep.Resources, ResourceChange{Name: n, Kind: ChangeAdded})
		}
	}
	slices.SortFunc(rep.Resources, func(p, q ResourceChange) int { return strings.Compare(p.Name, q.Name) })
}
