package archetype_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

// sectionWorld builds a world whose chosen entities point at each other, at an entity with a
// stable id that is not chosen, and at a global entity; chosen are returned first, in order.
type sectionFixture struct {
	w       *ecs.World
	chosen  []ecs.Entity
	global  ecs.Entity // an entity outside the section with no stable id
	outside ecs.Entity // an entity outside the section known by stable id 77
}

func newSectionFixture() *sectionFixture {
	w := ecs.NewWorld()
	registerAll(w)
	fx := &sectionFixture{w: w}
	fx.global = ecs.NewMap1[Name](w).NewEntity(&Name{"global"})
	fx.outside = ecs.NewMap1[Position](w).NewEntity(&Position{7, 7})
	pv := ecs.NewMap2[Position, Velocity](w)
	bags := ecs.NewMap2[Bag, Target](w)
	child := ecs.NewMap2[Position, ChildOf](w)
	a := pv.NewEntity(&Position{1, 2}, &Velocity{3, 4})
	b := ecs.NewMap3[Position, Health, Marker](w).NewEntity(&Position{5, 6}, &Health{9, 10}, &Marker{})
	p := Position{3, 4}
	c := bags.NewEntity(&Bag{Items: []string{"x"}, Counts: map[string]int{"a": 1}, Ptr: &p,
		Friends: map[string]ecs.Entity{"a": a, "out": fx.outside, "g": fx.global},
		Best:    b}, &Target{E: a, W: 0.5})
	d := bags.NewEntity(&Bag{Best: fx.outside}, &Target{E: fx.global, W: 1})
	e := child.NewEntity(&Position{0, 0}, &ChildOf{}, ecs.Rel[ChildOf](b))
	f := child.NewEntity(&Position{1, 0}, &ChildOf{}, ecs.Rel[ChildOf](fx.outside))
	pv.NewEntity(&Position{99, 99}, &Velocity{}) // not chosen
	fx.chosen = []ecs.Entity{a, b, c, d, e, f}
	return fx
}

func (fx *sectionFixture) refs(resolved ecs.Entity) archetype.Option {
	return archetype.StableRefs(
		func(e ecs.Entity) (uint64, bool) { return 77, e == fx.outside },
		func(id uint64) ecs.Entity {
			if id == 77 {
				return resolved
			}
			return ecs.Entity{}
		})
}

func appendSection(t testing.TB, fx *sectionFixture, opts ...archetype.Option) []byte {
	t.Helper()
	data, err := archetype.AppendEntities(nil, fx.w, fx.chosen, append([]archetype.Option{fx.refs(ecs.Entity{})}, opts...)...)
	if err != nil {
		t.Fatalf("AppendEntities: %v", err)
	}
	return data
}

// lz4Option is the LZ4 option when lz4 is set.
func lz4Option(lz4 bool) []archetype.Option {
	if lz4 {
		return []archetype.Option{archetype.LZ4()}
	}
	return nil
}

// A section read into another world that holds entities of its own comes back with every
// component, and every reference pointing where it should: inside the section to the new
// entities, by stable id to what the resolver says, and otherwise to the entity as it was.
func TestSectionRoundTrip(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		fx := newSectionFixture()
		data := appendSection(t, fx, lz4Option(lz4)...)

		dst := ecs.NewWorld()
		registerAll(dst)
		// dst holds entities of its own, including the global one at the same id: a world
		// loaded from the same world file has it.
		for range 3 {
			ecs.NewMap1[Velocity](dst).NewEntity(&Velocity{1, 1})
		}
		moved := ecs.NewMap1[Position](dst).NewEntity(&Position{7, 7}) // "outside", loaded elsewhere
		before := dst.Stats().Entities.Used
		got, err := archetype.DecodeEntities(data, dst, fx.refs(moved))
		expectNoError(t, err, "DecodeEntities")
		expectEqual(t, len(fx.chosen), len(got), "entities created")
		expectEqual(t, before+len(fx.chosen), dst.Stats().Entities.Used, "entities in the world")

		// The section lists entities grouped by table, in the given order within each; here
		// every chosen entity has its own table but c and d and e and f.
		m := map[ecs.Entity]ecs.Entity{}
		for i, e := range got {
			m[fx.chosen[i]] = e
		}
		a, b, c, d, e, f := m[fx.chosen[0]], m[fx.chosen[1]], m[fx.chosen[2]], m[fx.chosen[3]], m[fx.chosen[4]], m[fx.chosen[5]]
		expectEqual(t, Position{1, 2}, *ecs.NewMap1[Position](dst).Get(a), "a's position")
		expectEqual(t, Velocity{3, 4}, *ecs.NewMap1[Velocity](dst).Get(a), "a's velocity")
		expectEqual(t, Health{9, 10}, *ecs.NewMap1[Health](dst).Get(b), "b's health")
		expectEqual(t, true, ecs.NewMap1[Marker](dst).HasAll(b), "b's marker")
		bag := ecs.NewMap1[Bag](dst).Get(c)
		expectEqual(t, b, bag.Best, "local reference in a msgpack value")
		expectEqual(t, a, bag.Friends["a"], "local reference in a map")
		expectEqual(t, moved, bag.Friends["out"], "stable reference")
		expectEqual(t, fx.global, bag.Friends["g"], "exact reference")
		expectDeepEqual(t, []string{"x"}, bag.Items, "slice")
		expectEqual(t, Position{3, 4}, *bag.Ptr, "pointer")
		expectEqual(t, Target{E: a, W: 0.5}, *ecs.NewMap1[Target](dst).Get(c), "local reference in raw memory")
		expectEqual(t, Target{E: fx.global, W: 1}, *ecs.NewMap1[Target](dst).Get(d), "exact reference in raw memory")
		expectEqual(t, moved, ecs.NewMap1[Bag](dst).Get(d).Best, "stable reference in a msgpack value")
		cm := ecs.NewMap1[ChildOf](dst)
		expectEqual(t, b, cm.GetRelation(e, 0), "relation to an entity of the section")
		expectEqual(t, moved, cm.GetRelation(f, 0), "relation by stable id")
	}
}

// Without a resolver, or when it knows no entity, a stable reference reads as the zero entity,
// and a relation to it is left zero.
func TestSectionUnresolvedStableRefs(t *testing.T) {
	fx := newSectionFixture()
	data := appendSection(t, fx)
	dst := ecs.NewWorld()
	registerAll(dst)
	got, err := archetype.DecodeEntities(data, dst)
	expectNoError(t, err, "DecodeEntities")
	expectEqual(t, ecs.Entity{}, ecs.NewMap1[Bag](dst).Get(got[3]).Best, "unresolved stable reference")
	expectEqual(t, ecs.Entity{}, ecs.NewMap1[ChildOf](dst).GetRelation(got[5], 0), "unresolved relation")
}

func TestSectionIsDeterministic(t *testing.T) {
	fx := newSectionFixture()
	a := appendSection(t, fx)
	b := appendSection(t, fx)
	expectBytes(t, a, b, "two sections of the same entities")
	info, err := pecs.ReadInfo(bytes.NewReader(a))
	expectNoError(t, err, "ReadInfo")
	expectEqual(t, uint64(len(fx.chosen)), info.Header.Entities, "entities")
	expectEqual(t, archetype.FlagSection, info.Header.Flags&archetype.FlagSection, "section flag")
	if info.Section == nil || info.Section.Stable != 1 || info.Section.Exact != 1 || info.Section.Local != 2 {
		t.Errorf("references: %+v", info.Section)
	}
}

// Sections and world files are not read by each other's reader.
func TestSectionAndWorldFileApart(t *testing.T) {
	fx := newSectionFixture()
	section := appendSection(t, fx)
	w := ecs.NewWorld()
	registerAll(w)
	if err := archetype.Decode(bytes.NewReader(section), w); err == nil {
		t.Fatal("Decode read a section")
	}
	if _, err := archetype.DecodeEntities(encode(t, smallWorld()), w); err == nil {
		t.Fatal("DecodeEntities read a world file")
	}
	expectEqual(t, 0, w.Stats().Entities.Used, "entities after refusals")
}

// Every truncation and every flipped byte of a section is refused, and leaves the world as it was.
func TestSectionDamageLeavesWorld(t *testing.T) {
	fx := newSectionFixture()
	data := appendSection(t, fx, archetype.LZ4())
	dst := ecs.NewWorld()
	registerAll(dst)
	ecs.NewMap1[Velocity](dst).NewEntity(&Velocity{})
	check := func(what string, bad []byte) {
		t.Helper()
		before := dst.Stats().Entities.Used
		if _, err := archetype.DecodeEntities(bad, dst); err == nil {
			t.Fatalf("%s: accepted", what)
		} else if !isSentinel(err) {
			t.Fatalf("%s: error matches no sentinel: %v", what, err)
		}
		expectEqual(t, before, dst.Stats().Entities.Used, what+": entities left in the world")
	}
	for n := 0; n < len(data); n += 7 {
		check("truncated", data[:n])
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x5a
		check("flipped byte", bad)
	}
}

// A migrated type's old values get their references resolved before the migration sees them.
func TestSectionMigrationResolvesRefs(t *testing.T) {
	fx := newSectionFixture()
	data := appendSection(t, fx, archetype.TypeVersion(ecs.C[Target](), 3))
	dst := ecs.NewWorld()
	registerAll(dst)
	migrate := archetype.Migrate(3, func(old map[string]any) (Target, error) {
		e, ok := old["E"].(ecs.Entity)
		if !ok {
			return Target{}, errors.New("no entity")
		}
		return Target{E: e, W: 42}, nil
	})
	got, err := archetype.DecodeEntities(data, dst, migrate)
	expectNoError(t, err, "DecodeEntities")
	expectEqual(t, Target{E: got[0], W: 42}, *ecs.NewMap1[Target](dst).Get(got[2]), "migrated value")
}

func TestSectionRefusals(t *testing.T) {
	fx := newSectionFixture()
	if _, err := archetype.AppendEntities(nil, fx.w, []ecs.Entity{fx.chosen[0], fx.chosen[0]}); err == nil {
		t.Error("an entity listed twice was accepted")
	}
	dead := ecs.NewMap1[Position](fx.w).NewEntity(&Position{})
	fx.w.RemoveEntity(dead)
	if _, err := archetype.AppendEntities(nil, fx.w, []ecs.Entity{dead}); err == nil {
		t.Error("a dead entity was accepted")
	}
	// Left out: entities with a component of SkipEntitiesWith; skipped components.
	data, err := archetype.AppendEntities(nil, fx.w, fx.chosen, archetype.SkipEntitiesWith(ecs.C[Marker]()), archetype.SkipComponents(ecs.C[Velocity]()))
	expectNoError(t, err, "AppendEntities")
	dst := ecs.NewWorld()
	registerAll(dst)
	got, err := archetype.DecodeEntities(data, dst)
	expectNoError(t, err, "DecodeEntities")
	expectEqual(t, len(fx.chosen)-1, len(got), "entities without the skipped one")
	expectEqual(t, false, ecs.NewMap1[Velocity](dst).HasAll(got[0]), "skipped component")
	// References to the entity left out are exact: it is no longer in the section.
	expectEqual(t, fx.chosen[1], ecs.NewMap1[Bag](dst).Get(got[1]).Best, "reference to an entity left out")
}

func TestSectionEmpty(t *testing.T) {
	w := ecs.NewWorld()
	data, err := archetype.AppendEntities(nil, w, nil)
	expectNoError(t, err, "AppendEntities")
	got, err := archetype.DecodeEntities(data, w)
	expectNoError(t, err, "DecodeEntities")
	expectEqual(t, 0, len(got), "entities")
}

// sectionJSON is what ExportSectionJSON writes, as a test reads it.
type sectionJSON struct {
	Format string              `json:"format"`
	PECS   string              `json:"pecs"`
	Flags  []string            `json:"flags"`
	Refs   [][]json.RawMessage `json:"refs"`
	Tables []struct {
		Components []string                     `json:"components"`
		Relations  map[string][2]uint64         `json:"relations"`
		Entities   []map[string]json.RawMessage `json:"entities"`
	} `json:"tables"`
	Resources map[string]json.RawMessage `json:"resources"`
}

// resolve names the refs entry that a stored reference [r, 0] stands for: "local 3",
// "stable 77", "exact [1,2]"; "zero" for [0, 0].
func (s *sectionJSON) resolve(t *testing.T, ref [2]uint64) string {
	t.Helper()
	if ref == [2]uint64{} {
		return "zero"
	}
	if ref[1] != 0 || ref[0] > uint64(len(s.Refs)) {
		t.Fatalf("reference %v is not an entry of refs (%d)", ref, len(s.Refs))
	}
	e := s.Refs[ref[0]-1]
	var kind string
	if err := json.Unmarshal(e[0], &kind); err != nil || len(e) != 2 {
		t.Fatalf("refs entry %d: %s", ref[0], e)
	}
	return kind + " " + string(e[1])
}

// The JSON view of a section lists each entity by its index with every component as the world
// export gives it, and every reference resolves through "refs": inside the section by index,
// by stable id, or to the entity as it is.
func TestExportSectionJSON(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		fx := newSectionFixture()
		data := appendSection(t, fx, lz4Option(lz4)...)
		var out bytes.Buffer
		expectNoError(t, archetype.ExportSectionJSON(&out, data), "ExportSectionJSON")
		var s sectionJSON
		expectNoError(t, json.Unmarshal(out.Bytes(), &s), "the JSON")
		expectEqual(t, "pecs-json 1", s.Format, "format")
		expectEqual(t, "2.1", s.PECS, "pecs")
		expectEqual(t, lz4, slices.Contains(s.Flags, "lz4"), "lz4 flag")
		expectEqual(t, true, slices.Contains(s.Flags, "section"), "section flag")
		expectEqual(t, 0, len(s.Resources), "resources")

		// Entities by index, and each one's components by short name.
		byIndex := map[int]map[string]json.RawMessage{}
		var rels []string
		for _, tb := range s.Tables {
			for name, target := range tb.Relations {
				rels = append(rels, name[strings.LastIndexByte(name, '.')+1:]+" -> "+s.resolve(t, target))
			}
			for _, e := range tb.Entities {
				var idx int
				expectNoError(t, json.Unmarshal(e["entity"], &idx), "entity index")
				comps := map[string]json.RawMessage{}
				for name, v := range e {
					comps[name[strings.LastIndexByte(name, '.')+1:]] = v
				}
				byIndex[idx] = comps
			}
		}
		expectEqual(t, len(fx.chosen), len(byIndex), "entities")
		find := func(comp, value string) int {
			t.Helper()
			for i, c := range byIndex {
				if string(c[comp]) == value {
					return i
				}
			}
			t.Fatalf("no entity with %s %s in %s", comp, value, out.Bytes())
			return -1
		}
		a := find("Position", `{"X":1,"Y":2}`)
		b := find("Health", `{"HP":9,"Max":10}`)
		expectEqual(t, `{"X":5,"Y":6}`, string(byIndex[b]["Position"]), "b's position")
		var bags []map[string]json.RawMessage
		for _, c := range byIndex {
			if c["Bag"] != nil {
				bags = append(bags, c)
			}
		}
		expectEqual(t, 2, len(bags), "entities with a Bag")
		type bag struct {
			Friends map[string][2]uint64
			Best    [2]uint64
		}
		type target struct {
			E [2]uint64
			W float32
		}
		var got []string
		for _, c := range bags {
			var bg bag
			var tg target
			expectNoError(t, json.Unmarshal(c["Bag"], &bg), "Bag")
			expectNoError(t, json.Unmarshal(c["Target"], &tg), "Target")
			got = append(got, fmt.Sprintf("best %s, friends a %s out %s g %s, target %s",
				s.resolve(t, bg.Best), s.resolve(t, bg.Friends["a"]), s.resolve(t, bg.Friends["out"]), s.resolve(t, bg.Friends["g"]), s.resolve(t, tg.E)))
		}
		slices.Sort(got)
		exact := fmt.Sprintf("exact [%d,%d]", fx.global.ID(), fx.global.Gen())
		expectDeepEqual(t, []string{
			fmt.Sprintf("best local %d, friends a local %d out stable 77 g %s, target local %d", b, a, exact, a),
			fmt.Sprintf("best stable 77, friends a zero out zero g zero, target %s", exact),
		}, got, "references inside components")
		slices.Sort(rels)
		expectDeepEqual(t, []string{fmt.Sprintf("ChildOf -> local %d", b), "ChildOf -> stable 77"}, rels, "relation targets")
	}
}

// ExportSectionJSON reads sections only, ExportJSON world files only; a damaged section is an
// ErrCorrupt.
func TestExportSectionJSONRefuses(t *testing.T) {
	fx := newSectionFixture()
	data := appendSection(t, fx)
	var world bytes.Buffer
	expectNoError(t, archetype.Encode(&world, fx.w), "Encode")
	if err := archetype.ExportSectionJSON(&bytes.Buffer{}, world.Bytes()); err == nil {
		t.Fatal("ExportSectionJSON took a world file")
	}
	if err := archetype.ExportJSON(&bytes.Buffer{}, bytes.NewReader(data)); err == nil {
		t.Fatal("ExportJSON took an entity section")
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"truncated", data[:len(data)-40]},
		{"longer", append(slices.Clone(data), 0)},
		{"flipped byte in the entity data", func() []byte {
			d := slices.Clone(data)
			d[len(d)-60] ^= 0x20
			return d
		}()},
	} {
		err := archetype.ExportSectionJSON(&bytes.Buffer{}, tc.data)
		if !errors.Is(err, archetype.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}

// FuzzDecodeEntities feeds arbitrary bytes to DecodeEntities, ReadInfo and ExportSectionJSON.
// When a section decodes, the world holds exactly the created entities besides its own, and its
// JSON export succeeds; when it does not, the world is as it was. An export that succeeds is
// valid JSON.
func FuzzDecodeEntities(f *testing.F) {
	fx := newSectionFixture()
	f.Add(appendSection(f, fx))
	f.Add(appendSection(f, fx, archetype.LZ4()))
	w := ecs.NewWorld()
	empty, _ := archetype.AppendEntities(nil, w, nil)
	f.Add(empty)
	for _, arch := range []string{"amd64", "386"} { // sections of either host: one is laid out anew
		if sec, err := os.ReadFile(relayoutSection(arch)); err == nil {
			f.Add(sec)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = pecs.ReadInfo(bytes.NewReader(data))
		var js bytes.Buffer
		exportErr := archetype.ExportSectionJSON(&js, data)
		if exportErr == nil && !json.Valid(js.Bytes()) {
			t.Fatalf("ExportSectionJSON wrote invalid JSON: %s", js.Bytes())
		}
		dst := fuzzWorld()
		own := ecs.NewMap1[Name](dst).NewEntity(&Name{"own"})
		refs := archetype.StableRefs(func(e ecs.Entity) (uint64, bool) { return 0, false },
			func(uint64) ecs.Entity { return own })
		got, err := archetype.DecodeEntities(data, dst, refs)
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("error matches no sentinel: %v", err)
			}
			if n := dst.Stats().Entities.Used; n != 1 {
				t.Fatalf("a refused section left %d entities", n-1)
			}
			return
		}
		if n := dst.Stats().Entities.Used; n != len(got)+1 {
			t.Fatalf("%d entities created, the world holds %d more", len(got), n-1)
		}
		if _, err := pecs.ReadInfo(bytes.NewReader(data)); err != nil {
			t.Fatalf("DecodeEntities accepted what ReadInfo rejects: %v", err)
		}
		if len(dedupe(got)) != len(got) {
			t.Fatal("an entity was returned twice")
		}
		if exportErr != nil {
			t.Fatalf("DecodeEntities accepted what ExportSectionJSON rejects: %v", exportErr)
		}
	})
}

func dedupe(es []ecs.Entity) []ecs.Entity {
	seen := map[ecs.Entity]bool{}
	var out []ecs.Entity
	for _, e := range es {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// A compact pool keeps every alive id and generation, keeps handles to dead entities dead, and
// takes a bit per slot instead of 8 bytes.
func TestCompactPool(t *testing.T) {
	w := richWorld()
	full := encode(t, w)
	compact := encode(t, w, archetype.CompactPool())
	info, err := pecs.ReadInfo(bytes.NewReader(compact))
	expectNoError(t, err, "ReadInfo")
	expectEqual(t, archetype.FlagCompactPool, info.Header.Flags&archetype.FlagCompactPool, "flag")
	expectEqual(t, uint16(1), info.Header.VersionMinor, "minor version")
	got := decode(t, compact)
	want := decode(t, full)
	wd, gd := want.Unsafe().DumpEntities(), got.Unsafe().DumpEntities()
	expectDeepEqual(t, wd.Alive, gd.Alive, "alive ids")
	for _, id := range wd.Alive {
		expectEqual(t, wd.Entities[id], gd.Entities[id], "alive entity")
	}
	expectEqual(t, len(wd.Entities), len(gd.Entities), "slots")
	// Every handle the world ever gave out for a free slot stays dead, and stays so after the
	// slot is used again.
	for id := 2; id < len(wd.Entities); id++ {
		if slices.Contains(wd.Alive, uint32(id)) {
			continue
		}
		if gd.Entities[id].Gen() <= wd.Entities[id].Gen() {
			t.Fatalf("free slot %d: generation %d, not above %d", id, gd.Entities[id].Gen(), wd.Entities[id].Gen())
		}
	}
	// Encoding the decoded world compactly again gives the same bytes.
	expectBytes(t, compact, encode(t, got, archetype.CompactPool()), "re-encoded")

	// Mostly skipped entities: a bit per slot.
	big := ecs.NewWorld()
	registerAll(big)
	pm := ecs.NewMap1[Position](big)
	for range 10000 {
		pm.NewEntity(&Position{})
	}
	ecs.NewMap1[Name](big).NewEntity(&Name{"kept"})
	skip := archetype.SkipEntitiesWith(ecs.C[Position]())
	fullSkip, compactSkip := encode(t, big, skip), encode(t, big, skip, archetype.CompactPool())
	if len(compactSkip) > 2000 || len(fullSkip) < 80000 {
		t.Fatalf("10,001 slots, 1 kept: %d bytes compact, %d full", len(compactSkip), len(fullSkip))
	}
	back := decode(t, compactSkip)
	expectEqual(t, 1, back.Stats().Entities.Used, "entities")
}
