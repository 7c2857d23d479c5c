package mapserve

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/sectionjson"
)

// kindPlayer is the entity.Kind of a saved player (components.Player)
// that has a position: players are saved apart from the chunks, each as
// one record of its entities, so the map shows one only where a component
// of its record says where it stands, found as for regional entities
// (Options.Position, else a component's X and Y); a player without one is
// not on the map. Its ID is the player's id.
const kindPlayer = "player"

// player is a saved player that the map places.
type player struct {
	entity
	key playerKey
}

// playerKey names a player's record: a new one is a new record.
type playerKey struct {
	data   string
	offset int64
	crc    uint32
}

// readPlayers reads the players of the view's generation and places those
// with a position, taking prev's of the same record. What does not read is
// a warning: the chunks still show.
func (v *view) readPlayers(dir string, o *Options, prev *view) {
	if v.man.Players == nil {
		return
	}
	d, err := savedir.OpenDirReadOnly(o.FS, dir)
	var p *savedir.Players
	if err == nil {
		p, err = d.ReadPlayers(v.man)
	}
	if err != nil {
		v.warnings = append(v.warnings, fmt.Sprintf("mapserve: players: %v", err))
		return
	}
	old := map[playerKey]*player{}
	if prev != nil {
		for _, pl := range prev.players {
			old[pl.key] = pl
		}
	}
	for _, e := range p.Entries {
		key := playerKey{p.Ref.Data, e.Offset, e.CRC32C}
		if pl, ok := old[key]; ok && pl.ID == e.ID {
			v.players = append(v.players, pl)
			continue
		}
		sec, err := d.ReadPlayer(p, e.ID)
		if err == nil {
			var pl *player
			if pl, err = placePlayer(e.ID, sec, v.size, o.Position); pl != nil {
				pl.key = key
				v.players = append(v.players, pl)
			}
		}
		if err != nil {
			v.warnings = append(v.warnings, fmt.Sprintf("mapserve: player %q: %v", e.ID, err))
		}
	}
}

// placePlayer places player id by the first entity of its record sec that
// has a position; nil when none has one. Its components are every entity
// of the record, in the export's view.
func placePlayer(id string, sec []byte, size int, place func(Components) (float64, float64, bool)) (*player, error) {
	var ents []json.RawMessage
	pl := &player{entity: entity{Kind: kindPlayer, ID: id}}
	found := false
	err := eachEntity(sec, func(e *sectionjson.Entity, raw, refs json.RawMessage) {
		ents = append(ents, raw)
		pl.Refs = refs
		if !found {
			pl.X, pl.Y, pl.Placed, pl.PlacedBy, found = locate(e, place)
		}
	})
	if err != nil || !found {
		return nil, err
	}
	pl.Components, err = json.Marshal(ents)
	pl.Bounds = markBounds(pl.X, pl.Y)
	pl.Chunk = [2]int32{int32(math.Floor(pl.X / float64(size))), int32(math.Floor(pl.Y / float64(size)))}
	return pl, err
}

// findPlayer returns the view's player id.
func (v *view) findPlayer(id string) (*player, bool) {
	i, ok := slices.BinarySearchFunc(v.players, id, func(p *player, id string) int { return strings.Compare(p.ID, id) })
	if !ok {
		return nil, false
	}
	return v.players[i], true
}

// samePlayers reports whether two views place the same players from the
// same records.
func samePlayers(a, b []*player) bool {
	return slices.EqualFunc(a, b, func(x, y *player) bool { return x.key == y.key && x.ID == y.ID })
}
