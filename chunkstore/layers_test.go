package chunkstore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// The game's layers in this file: a pixel is material (byte 0), colour
// (byte 1), damage (byte 2), the pixel-body flag (bit 24) and seven bits
// of simulation flags.
func gameLayers(damage bool, damageDefault uint32) []chunkstore.Layer {
	ls := []chunkstore.Layer{
		{Name: "material", Offset: 0, Bits: 8, Persist: true},
		{Name: "color", Offset: 8, Bits: 8, Persist: true},
		{Name: "pixel-body-flag", Offset: 24, Bits: 1, Persist: true},
		{Name: "simulation-flags", Offset: 25, Bits: 7, Persist: false, Default: 5},
	}
	if damage {
		ls = append(ls, chunkstore.Layer{Name: "damage", Offset: 16, Bits: 8, Persist: true, Default: damageDefault})
	}
	return ls
}

// Only the persisted layers are stored; a layer that is not persisted
// reads as its default, in stored and in generated chunks alike.
func TestLayersKeepPersistedOnly(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	cfg.Layers = gameLayers(true, 0)
	s := create(t, cfg)
	defer s.Close()
	p := chunkstore.Pos{X: 1, Y: 0}
	pix := generated(p, small)
	for i := range pix {
		pix[i] = pix[i]&0x00FFFFFF | uint32(i%256)<<24 // body flag on odd i, simulation flags changing
	}
	pix[3] = 0x00170304 // a change of the persisted layers
	b := s.NewBatch()
	b.PutChunk(p, pix)
	commit(t, s, b)
	got := make([]uint32, npix)
	expect(t, must2[bool](t)(s.Get(p, got)), "not stored")
	for i := range got {
		want := pix[i]&0x01FFFFFF | 5<<25
		expect(t, got[i] == want, "pixel %d: %08x, want %08x", i, got[i], want)
	}
	// A chunk that is not stored: generated, the simulation flags at their default.
	q := chunkstore.Pos{X: 2, Y: 0}
	must2[bool](t)(s.Get(q, got))
	gen := generated(q, small)
	for i := range got {
		expect(t, got[i] == gen[i]&0x01FFFFFF|5<<25, "generated pixel %d: %08x", i, got[i])
	}
	raw, _, err := storetool.Tool.ReadRaw(s, p)
	must(t, err)
	expect(t, raw.Layers == 0x01FFFFFF, "record holds layers %08x", raw.Layers)
	mustCheck(t, s)
}

// A layer the game registers after chunks were saved loads with its
// default in those chunks, and as saved in chunks written since.
func TestLayerAddedLater(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.Layers = gameLayers(false, 0)
	s := create(t, cfg)
	old := chunkstore.Pos{X: 1, Y: 0}
	pix := generated(old, small)
	for i := range pix {
		pix[i] = pix[i]&0xFF00FFFF | 0x00420000 // damage the game does not save yet
	}
	pix[0] = 0x00420909
	b := s.NewBatch()
	b.PutChunk(old, pix)
	commit(t, s, b)
	must(t, s.Close())

	cfg.Layers = gameLayers(true, 7) // damage is saved from now on, 7 where a record lacks it
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	defer s.Close()
	got := make([]uint32, npix)
	expect(t, must2[bool](t)(s.Get(old, got)), "old chunk not stored")
	for i := range got {
		want := pix[i]&0x0100FFFF | 7<<16 | 5<<25
		expect(t, got[i] == want, "old chunk pixel %d: %08x, want %08x", i, got[i], want)
	}
	// Written with damage: damage 0 is 0, not the default.
	fresh := chunkstore.Pos{X: 2, Y: 0}
	pix2 := generated(fresh, small)
	pix2[0] = 0x00000909
	pix2[1] = 0x00330909
	b = s.NewBatch()
	b.PutChunk(fresh, pix2)
	commit(t, s, b)
	must2[bool](t)(s.Get(fresh, got))
	expect(t, got[0] == 0x0A000909 && got[1] == 0x0A330909, "fresh chunk: %08x %08x", got[0], got[1])
	mustCheck(t, s)
}

// Records of format 2 do not say which layers they hold: they are read as
// holding every layer the reader persists.
func TestLayersOnFormat2Records(t *testing.T) {
	cfg := fixtureConfig(loadFixture(t, "v2/good"))
	plain := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	want := make([]uint32, 64)
	must2[bool](t)(plain.Get(chunkstore.Pos{X: 0, Y: 20}, want))
	plain.Close()
	cfg = fixtureConfig(loadFixture(t, "v2/good"))
	cfg.Layers = []chunkstore.Layer{{Name: "all", Offset: 0, Bits: 32, Persist: true, Default: 9}}
	s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	defer s.Close()
	got := make([]uint32, 64)
	must2[bool](t)(s.Get(chunkstore.Pos{X: 0, Y: 20}, got))
	expect(t, slices.Equal(got, want), "a format 2 record read with layers differs")
}

// Layers that cannot describe a pixel are refused, naming the layer.
func TestLayersInvalid(t *testing.T) {
	for name, tc := range map[string]struct {
		layers []chunkstore.Layer
	}{
		"overlap":      {layers: []chunkstore.Layer{{Name: "a", Offset: 0, Bits: 8, Persist: true}, {Name: "b", Offset: 4, Bits: 8}}},
		"past 32 bits": {layers: []chunkstore.Layer{{Name: "a", Offset: 30, Bits: 4, Persist: true}}},
		"no bits":      {layers: []chunkstore.Layer{{Name: "a", Offset: 0, Bits: 0, Persist: true}}},
		"default":      {layers: []chunkstore.Layer{{Name: "a", Offset: 0, Bits: 2, Persist: true, Default: 4}}},
		"no name":      {layers: []chunkstore.Layer{{Offset: 0, Bits: 2, Persist: true}}},
		"same name":    {layers: []chunkstore.Layer{{Name: "a", Offset: 0, Bits: 2, Persist: true}, {Name: "a", Offset: 2, Bits: 2}}},
		"none saved":   {layers: []chunkstore.Layer{{Name: "a", Offset: 0, Bits: 2}}},
	} {
		cfg := testConfig(vfs.NewMem())
		cfg.Layers = tc.layers
		_, err := chunkstore.Create(storePath, &cfg)
		expect(t, errors.Is(err, chunkstore.ErrInvalidConfig), "%s: %v", name, err)
	}
	expect(t, chunkstore.LayerMask(gameLayers(true, 0)) == 0x01FFFFFF, "mask %08x", chunkstore.LayerMask(gameLayers(true, 0)))
}
