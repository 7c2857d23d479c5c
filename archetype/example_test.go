package archetype_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

// Save a world and load it into a fresh one. This is the README's usage example.
func Example() {
	type Pos struct{ X, Y float64 }
	type Label struct{ Text string }

	world := ecs.NewWorld()
	mapper := ecs.NewMap2[Pos, Label](world)
	e := mapper.NewEntity(&Pos{1, 2}, &Label{"hero"})

	var file bytes.Buffer // or an *os.File
	if err := archetype.Encode(&file, world); err != nil {
		panic(err)
	}

	loaded := ecs.NewWorld()
	ecs.ComponentID[Pos](loaded) // register every component type
	ecs.ComponentID[Label](loaded)
	if err := archetype.Decode(&file, loaded); err != nil {
		panic(err)
	}
	pos, label := ecs.NewMap2[Pos, Label](loaded).Get(e) // the same entity
	fmt.Println(*pos, label.Text)
	// Output: {1 2} hero
}

func ExampleEncode() {
	world := ecs.NewWorld()
	ecs.NewMap2[Position, Velocity](world).NewEntity(&Position{1, 2}, &Velocity{3, 4})
	ecs.AddResource(world, &Tick{N: 99})

	var file bytes.Buffer
	err := archetype.Encode(&file, world, archetype.Timestamp(testTime)) // same world, same bytes
	fmt.Println(err, file.Len(), "bytes")
	// Output: <nil> 645 bytes
}

func ExampleAppendEncode() {
	world := ecs.NewWorld()
	ecs.NewMap2[Position, Velocity](world).NewEntity(&Position{1, 2}, &Velocity{3, 4})

	// The slice grows once, to the file's size; a slice with room is filled in place.
	file, err := archetype.AppendEncode(nil, world, archetype.Timestamp(testTime))
	fmt.Println(err, len(file), "bytes", string(file[:4]))

	loaded := ecs.NewWorld()
	ecs.ComponentID[Position](loaded)
	ecs.ComponentID[Velocity](loaded)
	err = archetype.Decode(bytes.NewReader(file), loaded)
	fmt.Println(err, loaded.Stats().Entities.Used, "entity")
	// Output:
	// <nil> 524 bytes PECS
	// <nil> 1 entity
}

func ExampleDecode() {
	world := ecs.NewWorld()
	e := ecs.NewMap1[Position](world).NewEntity(&Position{1, 2})
	ecs.AddResource(world, &Tick{N: 99})
	var file bytes.Buffer
	if err := archetype.Encode(&file, world); err != nil {
		panic(err)
	}

	// Prepare the target as for ark-serde: component types registered, resources as placeholders.
	loaded := ecs.NewWorld()
	ecs.ComponentID[Position](loaded)
	ecs.AddResource(loaded, &Tick{})
	if err := archetype.Decode(&file, loaded); err != nil {
		panic(err)
	}
	fmt.Println(loaded.Alive(e), *ecs.NewMap1[Position](loaded).Get(e), ecs.GetResource[Tick](loaded).N)
	// Output: true {1 2} 99
}

// Entities with a marker component are not saved; after loading, their slots are free and old
// handles to them are dead.
func ExampleSkipEntitiesWith() {
	world := ecs.NewWorld()
	kept := ecs.NewMap1[Position](world).NewEntity(&Position{1, 2})
	gone := ecs.NewMap2[Position, Marker](world).NewEntity(&Position{3, 4}, &Marker{})

	var file bytes.Buffer
	if err := archetype.Encode(&file, world, archetype.SkipEntitiesWith(ecs.C[Marker]())); err != nil {
		panic(err)
	}
	loaded := ecs.NewWorld()
	ecs.ComponentID[Position](loaded)
	if err := archetype.Decode(&file, loaded); err != nil {
		panic(err)
	}
	fmt.Println(loaded.Alive(kept), loaded.Alive(gone))
	// Output: true false
}

// Transient components keep their place on the entity but not their data.
func ExampleTransient() {
	world := ecs.NewWorld()
	e := ecs.NewMap2[Position, Health](world).NewEntity(&Position{1, 2}, &Health{HP: 5, Max: 9})

	var file bytes.Buffer
	if err := archetype.Encode(&file, world, archetype.Transient(ecs.C[Health]())); err != nil {
		panic(err)
	}
	loaded := ecs.NewWorld()
	ecs.ComponentID[Position](loaded)
	ecs.ComponentID[Health](loaded)
	if err := archetype.Decode(&file, loaded); err != nil {
		panic(err)
	}
	pos, health := ecs.NewMap2[Position, Health](loaded).Get(e)
	fmt.Println(*pos, *health)
	// Output: {1 2} {0 0}
}

func ExampleLZ4() {
	world := ecs.NewWorld()
	m := ecs.NewMap1[Position](world)
	for range 1000 {
		m.NewEntity(&Position{1, 1})
	}
	var plain, packed bytes.Buffer
	_ = archetype.Encode(&plain, world)
	_ = archetype.Encode(&packed, world, archetype.LZ4())
	fmt.Println(packed.Len() < plain.Len()/2)
	// Output: true
}

// A component type was renamed from OldPos to NewPos: old files still load.
func ExampleAlias() {
	world := ecs.NewWorld()
	e := ecs.NewMap1[OldPos](world).NewEntity(&OldPos{1, 2})
	var file bytes.Buffer
	_ = archetype.Encode(&file, world)

	loaded := ecs.NewWorld()
	ecs.ComponentID[NewPos](loaded)
	err := archetype.Decode(&file, loaded,
		archetype.Alias("github.com/arksave/arksave/archetype_test.OldPos", ecs.C[NewPos]()))
	fmt.Println(err, *ecs.NewMap1[NewPos](loaded).Get(e))
	// Output: <nil> {1 2}
}

// Version 0 of a label held one string; version 3 (see LabelV3.PECSVersion) holds words.
func ExampleMigrate() {
	world := ecs.NewWorld()
	e := ecs.NewMap1[LabelV0](world).NewEntity(&LabelV0{Text: "old school label"})
	var file bytes.Buffer
	_ = archetype.Encode(&file, world)

	loaded := ecs.NewWorld()
	ecs.ComponentID[LabelV3](loaded)
	err := archetype.Decode(&file, loaded,
		archetype.Alias("github.com/arksave/arksave/archetype_test.LabelV0", ecs.C[LabelV3]()), // renamed, too
		archetype.Migrate(0, func(old map[string]any) (LabelV3, error) {
			words := strings.Fields(old["Text"].(string))
			return LabelV3{Words: words, Len: len(words)}, nil
		}))
	fmt.Println(err, *ecs.NewMap1[LabelV3](loaded).Get(e))
	// Output: <nil> {[old school label] 3}
}

// What the inspect command reads of a file (internal/pecs, filled in by this package).
func Example_info() {
	var file bytes.Buffer
	_ = archetype.Encode(&file, smallWorld(), archetype.Timestamp(testTime))
	info, err := pecs.ReadInfo(&file)
	fmt.Println(err, info.Header.Entities, "entities in", len(info.Tables), "tables; checksum ok:", info.Checksum.OK)
	for _, t := range info.Types {
		fmt.Println(strings.TrimSpace(strings.TrimPrefix(t.Name, "github.com/arksave/arksave/archetype_test.") + " " + t.Encoding + " " + t.Layout))
	}
	// Output:
	// <nil> 3 entities in 3 tables; checksum ok: true
	// ChildOf zero-sized
	// Health raw {HP int32 @0, Max int32 @4}
	// Marker zero-sized
	// Name msgpack {S string}
	// Position raw {X float64 @0, Y float64 @8}
	// Velocity raw {X float64 @0, Y float64 @8}
	// Config msgpack {Title string, Seed int64, Tags []string}
	// Tick msgpack {N uint64}
}

func ExampleExportJSON() {
	type Pos struct{ X, Y float64 }
	world := ecs.NewWorld()
	ecs.NewMap1[Pos](world).NewEntity(&Pos{1, 2})
	var file bytes.Buffer
	_ = archetype.Encode(&file, world, archetype.Timestamp(testTime))
	if err := archetype.ExportJSON(os.Stdout, &file); err != nil {
		panic(err)
	}
	// Output:
	// {
	// "format": "pecs-json 1",
	// "pecs": "2.0",
	// "timestamp": "2023-11-14T22:13:20Z",
	// "flags": [],
	// "types": [
	//   {"name": "github.com/arksave/arksave/archetype_test.Pos", "version": 0, "flags": ["raw"], "size": 16, "encoding": "raw", "layout": "{X float64 @0, Y float64 @8}", "schema": "DxAAAAACAAEAWAAAAAALAQBZCAAAAAs="}
	// ],
	// "pool": {"next": 0, "available": 0, "slots": [[0,4294967295],[1,4294967295],[2,0]]},
	// "tables": [
	//   {"archetype": "0xcb1a204a66958575", "components": ["github.com/arksave/arksave/archetype_test.Pos"], "relations": {},
	//    "entities": [
	//     {"entity": [2,0], "github.com/arksave/arksave/archetype_test.Pos": {"X":1,"Y":2}}]}
	// ],
	// "resources": {
	// }
	// }
}

// The JSON export turns back into the same file; values edited in it are saved as their types say.
func ExampleImportJSON() {
	type Pos struct{ X, Y float64 }
	world := ecs.NewWorld()
	e := ecs.NewMap1[Pos](world).NewEntity(&Pos{1, 2})
	var file, js, again bytes.Buffer
	_ = archetype.Encode(&file, world, archetype.Timestamp(testTime))
	_ = archetype.ExportJSON(&js, bytes.NewReader(file.Bytes()))
	if err := archetype.ImportJSON(&again, bytes.NewReader(js.Bytes())); err != nil {
		panic(err)
	}
	fmt.Println("same bytes:", bytes.Equal(file.Bytes(), again.Bytes()))

	edited := strings.Replace(js.String(), `{"X":1,"Y":2}`, `{"X":1,"Y":-2.5}`, 1)
	again.Reset()
	if err := archetype.ImportJSON(&again, strings.NewReader(edited)); err != nil {
		panic(err)
	}
	loaded := ecs.NewWorld()
	ecs.ComponentID[Pos](loaded)
	_ = archetype.Decode(&again, loaded)
	fmt.Println("edited:", *ecs.NewMap1[Pos](loaded).Get(e))

	err := archetype.ImportJSON(io.Discard, strings.NewReader(strings.Replace(js.String(), `"Y":2`, `"Y":"two"`, 1)))
	fmt.Println(errors.Is(err, archetype.ErrBadJSON), strings.Contains(err.Error(), `Pos"].Y`))
	// Output:
	// same bytes: true
	// edited: {1 -2.5}
	// true true
}

// Values behind interfaces are saved with their concrete type's name: register the game's own
// types once (built-in types need nothing).
func ExampleRegister() {
	type Loot struct {
		Item  any // an int, a string, a registered Square, ...
		Shape Shape
	}
	archetype.Register[Square]() // usually in an init function

	world := ecs.NewWorld()
	e := ecs.NewMap1[Loot](world).NewEntity(&Loot{Item: []int{1, 2}, Shape: Square{Side: 3}})
	var file bytes.Buffer
	if err := archetype.Encode(&file, world); err != nil {
		panic(err)
	}
	loaded := ecs.NewWorld()
	ecs.ComponentID[Loot](loaded)
	if err := archetype.Decode(&file, loaded); err != nil {
		panic(err)
	}
	loot := ecs.NewMap1[Loot](loaded).Get(e)
	fmt.Printf("%T %v, %T %v\n", loot.Item, loot.Item, loot.Shape, loot.Shape.Area())
	// Output: []int [1 2], archetype_test.Square 9
}

// Check refuses at start-up what a save could not bring back, naming the field and the ways out.
func ExampleCheck() {
	type Brain struct {
		Mood int
		//lint:ignore U1000 the field Check refuses
		onThink func()
	}
	type Enemy struct{ AI Brain }

	world := ecs.NewWorld()
	ecs.ComponentID[Enemy](world)
	err := archetype.Check(world)
	fmt.Println(errors.Is(err, archetype.ErrUnsupportedType), strings.Contains(err.Error(), "Enemy.AI.onThink"))
	fmt.Println(archetype.Check(world, archetype.Transient(ecs.C[Enemy]()))) // membership saved, data not
	// Output:
	// true true
	// <nil>
}

// A resource of a package the program does not import (here ark-tools' scheduler) is left out by
// its full type name.
func ExampleSkipResourceNames() {
	world := ecs.NewWorld()
	ecs.AddResource(world, &Tick{N: 1})
	var file bytes.Buffer
	err := archetype.Encode(&file, world, archetype.SkipResourceNames("github.com/arksave/arksave/archetype_test.Tick"))
	info, _ := pecs.ReadInfo(&file)
	fmt.Println(err, len(info.Resources))
	// Output: <nil> 0
}

// Save the entities of one place (a chunk, a player) and read them into a world that holds
// others: references inside the section come back to the new entities, references to entities
// the caller knows by a stable id are resolved through StableRefs.
func ExampleAppendEntities() {
	type Pos struct{ X, Y float64 }
	type Link struct{ To ecs.Entity }

	world := ecs.NewWorld()
	m := ecs.NewMap2[Pos, Link](world)
	far := m.NewEntity(&Pos{100, 0}, &Link{})    // elsewhere, known by stable id 42
	a := m.NewEntity(&Pos{1, 2}, &Link{To: far}) // points outside the section
	b := m.NewEntity(&Pos{3, 4}, &Link{To: a})   // points inside
	refs := archetype.StableRefs(func(e ecs.Entity) (uint64, bool) { return 42, e == far }, nil)
	section, err := archetype.AppendEntities(nil, world, []ecs.Entity{a, b}, refs)
	fmt.Println(err, string(section[:4]))

	other := ecs.NewWorld()
	om := ecs.NewMap2[Pos, Link](other)
	farThere := om.NewEntity(&Pos{100, 0}, &Link{}) // the entity with stable id 42 in this world
	resolve := archetype.StableRefs(nil, func(id uint64) ecs.Entity { return farThere })
	got, err := archetype.DecodeEntities(section, other, resolve)
	links := ecs.NewMap1[Link](other)
	fmt.Println(err, len(got), links.Get(got[0]).To == farThere, links.Get(got[1]).To == got[0])
	// Output:
	// <nil> PECS
	// <nil> 2 true true
}

// A world whose entities are mostly saved elsewhere writes its pool as a bit per slot.
func ExampleCompactPool() {
	world := ecs.NewWorld()
	for range 1000 {
		ecs.NewMap1[Position](world).NewEntity(&Position{}) // saved elsewhere
	}
	ecs.NewMap1[Velocity](world).NewEntity(&Velocity{1, 2})
	skip := archetype.SkipEntitiesWith(ecs.C[Position]())
	full, _ := archetype.AppendEncode(nil, world, skip, archetype.Timestamp(testTime))
	compact, _ := archetype.AppendEncode(nil, world, skip, archetype.CompactPool(), archetype.Timestamp(testTime))
	fmt.Println(len(full), "bytes,", len(compact), "compact")
	// Output: 8379 bytes, 481 compact
}

// A section's entities as JSON: references are entries of "refs", counted from 1.
func ExampleExportSectionJSON() {
	type Pos struct{ X, Y float64 }
	type Link struct{ To ecs.Entity }

	world := ecs.NewWorld()
	m := ecs.NewMap2[Pos, Link](world)
	far := m.NewEntity(&Pos{100, 0}, &Link{})    // elsewhere, known by stable id 42
	a := m.NewEntity(&Pos{1, 2}, &Link{To: far}) // points outside the section: refs entry 1
	b := m.NewEntity(&Pos{3, 4}, &Link{To: a})   // points inside: refs entry 2
	refs := archetype.StableRefs(func(e ecs.Entity) (uint64, bool) { return 42, e == far }, nil)
	section, _ := archetype.AppendEntities(nil, world, []ecs.Entity{a, b}, refs)
	if err := archetype.ExportSectionJSON(os.Stdout, section); err != nil {
		panic(err)
	}
	// Output:
	// {
	// "format": "pecs-json 1",
	// "pecs": "2.1",
	// "timestamp": "1970-01-01T00:00:00Z",
	// "flags": ["section"],
	// "types": [
	//   {"name": "github.com/arksave/arksave/archetype_test.Link", "version": 0, "flags": ["raw"], "size": 8, "encoding": "raw", "layout": "{To ecs.Entity @0}", "schema": "DwgAAAABAAIAVG8AAAAAEA=="},
	//   {"name": "github.com/arksave/arksave/archetype_test.Pos", "version": 0, "flags": ["raw"], "size": 16, "encoding": "raw", "layout": "{X float64 @0, Y float64 @8}", "schema": "DxAAAAACAAEAWAAAAAALAQBZCAAAAAs="}
	// ],
	// "refs": [["stable",42],["local",0]],
	// "tables": [
	//   {"archetype": "0x6d53f0b447276cc9", "components": ["github.com/arksave/arksave/archetype_test.Link", "github.com/arksave/arksave/archetype_test.Pos"], "relations": {},
	//    "entities": [
	//     {"entity": 0, "github.com/arksave/arksave/archetype_test.Link": {"To":[1,0]}, "github.com/arksave/arksave/archetype_test.Pos": {"X":1,"Y":2}},
	//     {"entity": 1, "github.com/arksave/arksave/archetype_test.Link": {"To":[2,0]}, "github.com/arksave/arksave/archetype_test.Pos": {"X":3,"Y":4}}]}
	// ],
	// "resources": {
	// }
	// }
}

// The header (internal/pecs.ReadHeader) shows a file's counts without reading the rest.
func Example_header() {
	type Pos struct{ X, Y float64 }
	w := ecs.NewWorld()
	m := ecs.NewMap1[Pos](w)
	for i := range 3 {
		m.NewEntity(&Pos{X: float64(i)})
	}
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, w); err != nil {
		fmt.Println(err)
		return
	}
	h, err := pecs.ReadHeader(buf.Bytes())
	fmt.Println(h.Entities, err)
	_, err = pecs.ReadHeader(buf.Bytes()[:10])
	fmt.Println(errors.Is(err, archetype.ErrCorrupt), errors.Is(err, io.ErrUnexpectedEOF))
	// Output:
	// 3 <nil>
	// true true
}
