package archetype_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
	"github.com/vmihailenco/msgpack/v5"
)

// exportJSON exports a file as JSON.
func exportJSON(t testing.TB, file []byte) []byte {
	t.Helper()
	var js bytes.Buffer
	expectNoError(t, archetype.ExportJSON(&js, bytes.NewReader(file)), "ExportJSON")
	return js.Bytes()
}

// importJSON imports JSON into a file.
func importJSON(t testing.TB, js []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := archetype.ImportJSON(&out, bytes.NewReader(js)); err != nil {
		t.Fatalf("ImportJSON: %v", err)
	}
	return out.Bytes()
}

// Export then import gives the same file, byte for byte, and so the same world: on the rich
// world (relations, dead and recycled slots, every kind of component, resources), on values of
// every kind behind interfaces, and on plain-old-data of every kind; plain, with LZ4, and with a
// transient component.
func TestImportGivesTheSameFile(t *testing.T) {
	worlds := map[string]func() *ecs.World{"rich": richWorld, "values": valueWorld, "plain-old-data": swapWorld, "no entities": func() *ecs.World { w := ecs.NewWorld(); registerAll(w); return w }}
	for name, mk := range worlds {
		for _, c := range []struct {
			opts      []archetype.Option
			transient bool // Velocity's data is not saved: compare the files only
		}{{}, {opts: []archetype.Option{archetype.LZ4()}}, {opts: []archetype.Option{archetype.Transient(ecs.C[Velocity]())}, transient: true}} {
			want := mk()
			file := encode(t, want, c.opts...)
			again := importJSON(t, exportJSON(t, file))
			expectBytes(t, file, again, name)
			if !c.transient {
				expectSameWorld(t, want, decodeSwapWorld(t, again))
			}
		}
	}
}

// Types of the lossless tests: values JSON has no plain form for.
type (
	// Odd holds what a naive JSON export loses.
	Odd struct {
		F32     float32
		F64     float64
		C       complex64
		Text    string
		Keys    map[string]int
		ByFloat map[float64]string
		Bytes   []byte
		Empty   []byte
		Arr     [4]byte
		Deep    **int
		Late    time.Time
		Early   time.Time
		Custom  Custom
		RawMP   RawMP
		Any     any
	}
	// OddPOD is raw memory with non-finite floats and blank fields.
	OddPOD struct {
		A float64
		_ int32
		B float32
		_ [3]uint8
		C complex128
	}
	// Custom encodes itself with msgpack's CustomEncoder.
	Custom struct{ N int }
	// RawMP encodes itself with msgpack's Marshaler.
	RawMP struct{ S string }
)

func (c Custom) EncodeMsgpack(e *msgpack.Encoder) error { return e.EncodeInt(int64(c.N) * 2) }
func (c *Custom) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeInt()
	c.N = n / 2
	return err
}
func (r RawMP) MarshalMsgpack() ([]byte, error) { return msgpack.Marshal([]string{r.S, r.S}) }
func (r *RawMP) UnmarshalMsgpack(b []byte) error {
	var s []string
	if err := msgpack.Unmarshal(b, &s); err != nil || len(s) != 2 {
		return errors.New("not two strings")
	}
	r.S = s[0]
	return nil
}

func oddWorld() *ecs.World {
	w := ecs.NewWorld()
	n := 7
	p := &n
	nan32 := math.Float32frombits(0x7fc00001)
	w.NewEntity()
	ecs.NewMap2[Odd, OddPOD](w).NewEntity(&Odd{
		F32: nan32, F64: math.Float64frombits(0xfff8000000000000), C: complex(float32(math.Inf(-1)), nan32),
		Text: "not \xff UTF-8", Keys: map[string]int{"ok": 1, "\xfe": 2}, ByFloat: map[float64]string{math.Copysign(0, -1): "minus zero", 1e300: "big"},
		Bytes: []byte{0, 1, 2}, Empty: []byte{}, Arr: [4]byte{9, 8, 7, 6}, Deep: &p,
		Late: time.Date(20000, 1, 2, 3, 4, 5, 6, time.UTC), Early: time.Date(-5, 1, 1, 0, 0, 0, 0, time.FixedZone("OLD", 1234)),
		Custom: Custom{N: 21}, RawMP: RawMP{S: "twice"}, Any: math.NaN(),
	}, &OddPOD{A: math.Float64frombits(0x7ff0000000000001), B: float32(math.Inf(1)), C: complex(math.NaN(), math.Copysign(0, -1))})
	ecs.AddResource(w, &Odd{F64: math.Inf(1)})
	return w
}

// NaN payloads, minus zero, infinities, strings and map keys that are not UTF-8, nil and empty
// byte slices, pointers to pointers, times outside the years 0-9999, values with their own
// msgpack methods, blank fields of raw structs: the JSON keeps them all.
func TestImportIsLossless(t *testing.T) {
	for _, opts := range [][]archetype.Option{nil, {archetype.LZ4()}} {
		file := encode(t, oddWorld(), opts...)
		js := exportJSON(t, file)
		for _, want := range []string{`"NaN:0x7fc00001"`, `"NaN:0xfff8000000000000"`, `"NaN:0x7ff0000000000001"`, `"-Inf"`, `"+Inf"`, `"NaN"`,
			`{"base64":"bm90IP8gVVRGLTg="}`, `"unix":`, `"_1":0`, `"_3":[0,0,0]`, `"Empty":""`, `"Bytes":"AAEC"`, `[-0,"minus zero"]`} {
			if !bytes.Contains(js, []byte(want)) {
				t.Errorf("the export lacks %s:\n%s", want, js)
			}
		}
		expectBytes(t, file, importJSON(t, js), "odd values")
	}
	w := ecs.NewWorld()
	ecs.ComponentID[Odd](w)
	ecs.ComponentID[OddPOD](w)
	ecs.AddResource(w, &Odd{})
	expectNoError(t, archetype.Decode(bytes.NewReader(importJSON(t, exportJSON(t, encode(t, oddWorld())))), w), "Decode")
	odd := firstOf[Odd](t, w)
	if odd.Text != "not \xff UTF-8" || odd.Keys["\xfe"] != 2 || **odd.Deep != 7 || odd.Late.Year() != 20000 || odd.Custom.N != 21 || odd.RawMP.S != "twice" ||
		odd.Empty == nil || math.Float32bits(odd.F32) != 0x7fc00001 {
		t.Errorf("decoded %+v", odd)
	}
}

// Values edited by hand are written as their types say: a float, an int, a string, a resource.
func TestImportTakesHandEdits(t *testing.T) {
	js := exportJSON(t, encode(t, smallWorld()))
	doc := editable(t, js)
	ent := entityWith(t, doc, "Position")
	ent[pkg+"Position"].(map[string]any)["X"] = json.Number("42.5")
	entityWith(t, doc, "Health")[pkg+"Health"].(map[string]any)["HP"] = json.Number("-9")
	entityWith(t, doc, "Name")[pkg+"Name"].(map[string]any)["S"] = "edited"
	doc["resources"].(map[string]any)[pkg+"Tick"].(map[string]any)["N"] = json.Number("18446744073709551615")
	w := decode(t, importJSON(t, marshal(t, doc)))
	expectEqual(t, 42.5, firstOf[Position](t, w).X, "Position.X")
	expectEqual(t, int32(-9), firstOf[Health](t, w).HP, "Health.HP")
	expectEqual(t, "edited", firstOf[Name](t, w).S, "Name.S")
	expectEqual(t, uint64(math.MaxUint64), ecs.GetResource[Tick](w).N, "Tick.N")
}

// editable parses JSON keeping numbers as they are written.
func editable(t *testing.T, js []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var doc map[string]any
	expectNoError(t, d.Decode(&doc), "parsing the export")
	return doc
}

func marshal(t *testing.T, doc map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(doc)
	expectNoError(t, err, "json.Marshal")
	return b
}

// entityWith returns the first entity of the export that has the component.
func entityWith(t *testing.T, doc map[string]any, comp string) map[string]any {
	t.Helper()
	for _, tab := range doc["tables"].([]any) {
		for _, e := range tab.(map[string]any)["entities"].([]any) {
			if m := e.(map[string]any); m[pkg+comp] != nil {
				return m
			}
		}
	}
	t.Fatalf("no entity with %s", comp)
	return nil
}

// tableWith returns the index and the table of the first table with the component.
func tableWith(t *testing.T, doc map[string]any, comp string) (int, map[string]any) {
	t.Helper()
	for i, tab := range doc["tables"].([]any) {
		m := tab.(map[string]any)
		for _, c := range m["components"].([]any) {
			if c == pkg+comp {
				return i, m
			}
		}
	}
	t.Fatalf("no table with %s", comp)
	return 0, nil
}

// Damaged or wrongly edited JSON is ErrBadJSON, naming the JSON path and what is wrong; nothing
// is written.
func TestImportRefusesBadJSON(t *testing.T) {
	world := richWorld()
	ecs.NewMap1[Drawing](world).NewEntity(&Drawing{Shape: Square{1}})
	ecs.NewMap1[Stamp](world).NewEntity(&Stamp{At: time.Unix(5, 0).UTC()})
	js := exportJSON(t, encode(t, world))
	pi, _ := tableWith(t, editable(t, js), "Position")
	cases := []struct {
		name  string
		text  func(string) string      // edits the text
		edit  func(doc map[string]any) // or the parsed document
		where string                   // the JSON path named
		what  string                   // and what is wrong
	}{
		{name: "truncated", text: func(s string) string { return s[:len(s)/2] }, what: "malformed JSON at offset"},
		{name: "key-twice", text: func(s string) string { return strings.Replace(s, `"flags": [],`, `"flags": [], "flags": [],`, 1) }, what: `key "flags" twice`},
		{name: "old-export", edit: func(d map[string]any) { d["format"] = "PECS 2.0" }, where: "format", what: "older arksave export"},
		{name: "unknown-key", edit: func(d map[string]any) { d["extra"] = 1 }, where: "the top level", what: `unknown key "extra"`},
		{name: "missing-pool", edit: func(d map[string]any) { delete(d, "pool") }, what: `key "pool" missing`},
		{name: "future-file", edit: func(d map[string]any) { d["pecs"] = "3.0" }, where: "pecs", what: "a file of format 3.0"},
		{name: "string-for-float", edit: func(d map[string]any) {
			entityWith(t, d, "Position")[pkg+"Position"].(map[string]any)["X"] = "one"
		}, where: `entities[0]["` + pkg + `Position"].X`, what: `"one" is not a float`},
		{name: "int-too-large", edit: func(d map[string]any) {
			entityWith(t, d, "Health")[pkg+"Health"].(map[string]any)["HP"] = json.Number("3000000000")
		}, where: `["` + pkg + `Health"].HP`, what: "above the greatest value 2147483647"},
		{name: "not-an-integer", edit: func(d map[string]any) {
			entityWith(t, d, "Name")[pkg+"Name"] = map[string]any{"S": json.Number("1")}
		}, where: `["` + pkg + `Name"].S`, what: "a string expected, found a number"},
		{name: "fraction-for-int", edit: func(d map[string]any) {
			entityWith(t, d, "Health")[pkg+"Health"].(map[string]any)["Max"] = json.Number("1.5")
		}, where: `["` + pkg + `Health"].Max`, what: "1.5 is not an integer"},
		{name: "wrong-generation", edit: func(d map[string]any) {
			e := entityWith(t, d, "Position")
			id := e["entity"].([]any)
			e["entity"] = []any{id[0], json.Number("77")}
		}, where: "entities[0].entity", what: "is not an alive slot of the pool"},
		{name: "unknown-component", edit: func(d map[string]any) {
			e := entityWith(t, d, "Velocity")
			e["x.Nope"] = e[pkg+"Velocity"]
			delete(e, pkg+"Velocity")
		}, where: "entities[0]", what: `"x.Nope" is not a component of the table`},
		{name: "missing-component", edit: func(d map[string]any) { delete(entityWith(t, d, "Velocity"), pkg+"Velocity") },
			where: "entities[0]", what: `component "` + pkg + `Velocity" missing`},
		{name: "extra-field", edit: func(d map[string]any) {
			entityWith(t, d, "Position")[pkg+"Position"].(map[string]any)["Z"] = json.Number("1")
		}, what: "2 fields expected, found 3"},
		{name: "dead-relation-target", edit: func(d map[string]any) {
			_, tab := tableWith(t, d, "ChildOf")
			tab["relations"].(map[string]any)[pkg+"ChildOf"] = []any{json.Number("2"), json.Number("99")}
		}, where: `relations["` + pkg + `ChildOf"]`, what: "target [2,99] is not an alive entity"},
		{name: "unlisted-concrete-type", edit: func(d map[string]any) {
			entityWith(t, d, "Drawing")[pkg+"Drawing"].(map[string]any)["Shape"].(map[string]any)["type"] = "x.Unknown"
		}, where: `["` + pkg + `Drawing"].Shape.type`, what: `"x.Unknown" is not listed in types as a concrete type`},
		{name: "missing-resource", edit: func(d map[string]any) { delete(d["resources"].(map[string]any), pkg+"Tick") }, where: "resources", what: "no value for resource type"},
		{name: "pool-does-not-add-up", edit: func(d map[string]any) {
			p := d["pool"].(map[string]any)
			p["available"] = json.Number("999")
		}, where: "pool.available", what: "do not add up"},
		{name: "bad-schema", edit: func(d map[string]any) { d["types"].([]any)[0].(map[string]any)["schema"] = "!!" }, where: "types[0].schema", what: "not base64"},
		{name: "archetype-mismatch", edit: func(d map[string]any) {
			d["tables"].([]any)[pi].(map[string]any)["archetype"] = "0x0000000000000001"
		}, what: "its components hash to"},
		{name: "unknown-type-flag", edit: func(d map[string]any) { d["types"].([]any)[0].(map[string]any)["flags"] = []any{"wobbly"} }, what: `unknown type flag "wobbly"`},
		{name: "short-raw-array", edit: func(d map[string]any) {
			entityWith(t, d, "Grid")[pkg+"Grid"].(map[string]any)["Cells"] = []any{[]any{json.Number("1"), json.Number("2")}}
		}, where: `["` + pkg + `Grid"].Cells`, what: "an array of 3 expected, found one of 1"},
		{name: "map-key-twice", edit: func(d map[string]any) {
			bag := entityWith(t, d, "Bag")[pkg+"Bag"].(map[string]any)
			bag["Counts"] = []any{[]any{"a", json.Number("1")}, []any{"a", json.Number("2")}}
		}, where: `["` + pkg + `Bag"].Counts`, what: "a key appears twice"},
		{name: "bad-location-kind", edit: func(d map[string]any) {
			entityWith(t, d, "Stamp")[pkg+"Stamp"].(map[string]any)["At"].(map[string]any)["kind"] = "mars"
		}, where: `["` + pkg + `Stamp"].At.kind`, what: `"mars" is not a location kind`},
		{name: "interface-without-type", edit: func(d map[string]any) {
			s := entityWith(t, d, "Drawing")[pkg+"Drawing"].(map[string]any)["Shape"].(map[string]any)
			delete(s, "type")
		}, where: `["` + pkg + `Drawing"].Shape`, what: `key "type" missing`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var text []byte
			if c.text != nil {
				text = []byte(c.text(string(js)))
			} else {
				doc := editable(t, js)
				c.edit(doc)
				text = marshal(t, doc)
			}
			var out bytes.Buffer
			err := archetype.ImportJSON(&out, bytes.NewReader(text))
			if !errors.Is(err, archetype.ErrBadJSON) || !strings.Contains(err.Error(), c.where) || !strings.Contains(err.Error(), c.what) {
				t.Fatalf("want ErrBadJSON naming %q and %q, got %v", c.where, c.what, err)
			}
			expectEqual(t, 0, out.Len(), "bytes written")
		})
	}
}

// JSON of a format 1.0 file, whose values have no stored schema, is refused with the way out.
func TestImportRefusesFormat1Values(t *testing.T) {
	data, err := os.ReadFile("testdata/v1-valid.pecs")
	expectNoError(t, err, "reading the 1.0 file")
	err = archetype.ImportJSON(new(bytes.Buffer), bytes.NewReader(exportJSON(t, data)))
	if !errors.Is(err, archetype.ErrBadJSON) || !strings.Contains(err.Error(), "format 1.0 without a value schema") || !strings.Contains(err.Error(), "save it again") {
		t.Errorf("want the way out for a 1.0 file, got %v", err)
	}
}
