package systems

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
)

// Players (components.Player) are saved apart: every entity with one
// player id makes up that player's record, one entity section, kept in
// the save's players files. Saves write the records of the loaded players
// that changed, and the records that SavePlayer set aside for players who
// left; LoadPlayer spawns one player.

type playerState struct {
	hash    uint64                 // of what the store holds (0: unknown or none)
	pending *snapshot.PlayerRecord // set aside by SavePlayer or DeletePlayer, not committed yet
}

type players struct {
	q     *ecs.Filter1[components.Player]
	state map[string]*playerState
	opts  []archetype.Option
}

func newPlayers(w *ecs.World, extra []archetype.Option) *players {
	return &players{
		q:     ecs.NewFilter1[components.Player](w),
		state: map[string]*playerState{},
		opts: append(slices.Clone(extra),
			archetype.SkipComponents(ecs.C[plugin.Home]()),
			archetype.SkipEntitiesWith(ecs.C[components.Transient]()),
			archetype.LZ4()),
	}
}

func (p *players) of(id string) *playerState {
	s := p.state[id]
	if s == nil {
		s = &playerState{}
		p.state[id] = s
	}
	return s
}

// online returns the entities of every loaded player, by player id.
func (r *runner) online() map[string][]ecs.Entity {
	out := map[string][]ecs.Entity{}
	q := r.pl.q.Query()
	for q.Next() {
		id := q.Get().ID
		out[id] = append(out[id], q.Entity())
	}
	return out
}

// playerEntities returns the loaded entities of player id.
func (r *runner) playerEntities(id string) []ecs.Entity {
	var out []ecs.Entity
	q := r.pl.q.Query()
	for q.Next() {
		if q.Get().ID == id {
			out = append(out, q.Entity())
		}
	}
	return out
}

// encodePlayer returns the record of a player's entities, in a fixed order.
func (r *runner) encodePlayer(id string, list []ecs.Entity) (rec snapshot.PlayerRecord, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = savedir.NewPanicError(p)
		}
	}()
	sort.Slice(list, func(i, j int) bool { return list[i].ID() < list[j].ID() })
	sec, err := archetype.AppendEntities(nil, r.world, list, append(r.pl.opts, archetype.StableRefs(r.toStable, nil))...)
	if err != nil {
		return rec, fmt.Errorf("arksave: encode player %q: %w", id, err)
	}
	return snapshot.PlayerRecord{ID: id, Section: sec, Hash: hashSet(sec, nil)}, nil
}

// playerRecords returns the snapshot's player records: the loaded players
// whose record differs from the stored one, and those set aside.
func (r *runner) playerRecords() ([]snapshot.PlayerRecord, error) {
	var out []snapshot.PlayerRecord
	on := r.online()
	ids := make([]string, 0, len(on))
	for id := range on {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := checkPlayerID(id); err != nil {
			return nil, err
		}
		rec, err := r.encodePlayer(id, on[id])
		if err != nil {
			return nil, err
		}
		if st := r.pl.of(id); rec.Hash != st.hash || st.pending != nil {
			out = append(out, rec)
		}
	}
	for id, st := range r.pl.state {
		if _, loaded := on[id]; !loaded && st.pending != nil {
			out = append(out, *st.pending)
		}
	}
	return out, nil
}

// confirmPlayers takes what a save committed of the players.
func (r *runner) confirmPlayers(phs []snapshot.PlayerRecord) {
	for _, ph := range phs {
		st := r.pl.of(ph.ID)
		st.hash = ph.Hash
		if st.pending != nil && st.pending.Hash == ph.Hash {
			st.pending = nil
		}
	}
}

func checkPlayerID(id string) error {
	if id == "" || len(id) > 255 {
		return fmt.Errorf("arksave: player id %q: want 1 to 255 bytes", id)
	}
	return nil
}

// SavePlayer sets the record of player id aside for the next save, which
// it asks for: the game may remove the player's entities at once (a player
// leaves). It fails with ErrNoPlayer when no entity has that player id.
func (r *runner) SavePlayer(id string) (plugin.Handle, error) {
	if r.closed {
		return nil, r.closedErr("SavePlayer")
	}
	if err := checkPlayerID(id); err != nil {
		return nil, err
	}
	list := r.playerEntities(id)
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: no entity in the world has player id %q", plugin.ErrNoPlayer, id)
	}
	rec, err := r.encodePlayer(id, list)
	if err != nil {
		return nil, err
	}
	r.pl.of(id).pending = &rec
	return r.RequestSave(), nil
}

// DeletePlayer removes player id's record at the next save, which it asks
// for. The player must not be in the world.
func (r *runner) DeletePlayer(id string) (plugin.Handle, error) {
	if r.closed {
		return nil, r.closedErr("DeletePlayer")
	}
	if err := checkPlayerID(id); err != nil {
		return nil, err
	}
	if len(r.playerEntities(id)) > 0 {
		return nil, fmt.Errorf("%w: %q", plugin.ErrPlayerOnline, id)
	}
	r.pl.of(id).pending = &snapshot.PlayerRecord{ID: id}
	return r.RequestSave(), nil
}

// LoadPlayer spawns player id's entities from its newest record: one set
// aside by SavePlayer, else the committed one. It returns them in the
// record's order. A player whose entities are in the world already is
// ErrPlayerOnline; one without a record ErrNoPlayer; a damaged record an
// error matching ErrCorrupt (nothing is spawned).
func (r *runner) LoadPlayer(id string) ([]ecs.Entity, error) {
	if r.closed {
		return nil, r.closedErr("LoadPlayer")
	}
	if err := checkPlayerID(id); err != nil {
		return nil, err
	}
	if len(r.playerEntities(id)) > 0 {
		return nil, fmt.Errorf("%w: %q", plugin.ErrPlayerOnline, id)
	}
	st := r.pl.of(id)
	var sec []byte
	fromStore := false
	if st.pending != nil {
		if st.pending.Section == nil {
			return nil, fmt.Errorf("%w: %q was deleted", plugin.ErrNoPlayer, id)
		}
		sec = st.pending.Section
	} else {
		var err error
		if sec, err = r.writer.ReadPlayer(id); err != nil {
			return nil, fmt.Errorf("arksave: load player %q: %w", id, err)
		}
		fromStore = true
	}
	g := r.reg
	g.unresolved = g.unresolved[:0]
	created, err := archetype.DecodeEntities(sec, r.world, append(r.pl.opts, archetype.StableRefs(nil, r.fromStable))...)
	if err != nil {
		return nil, fmt.Errorf("arksave: load player %q: %w", id, err)
	}
	for _, rid := range g.unresolved {
		g.waiting[rid] = append(g.waiting[rid], created...)
	}
	if fromStore {
		// Unchanged, it is not written again.
		if rec, err := r.encodePlayer(id, slices.Clone(created)); err == nil {
			st.hash = rec.Hash
		}
	}
	return created, nil
}

// Players returns the ids of the saved players, ascending: those the
// committed save holds and those set aside for the next save, without
// those deleted.
func (r *runner) Players() []string {
	set := map[string]bool{}
	for _, id := range r.writer.Players() {
		set[id] = true
	}
	for id, st := range r.pl.state {
		if st.pending != nil {
			set[id] = st.pending.Section != nil
		}
	}
	var out []string
	for id, ok := range set {
		if ok {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
