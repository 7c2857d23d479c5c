package archetype_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
)

// Padded lays out differently on 64-bit and 32-bit hosts: a float64 after an int32 sits at 8
// on amd64 and at 4 on 386, and the struct is 56 bytes there, 40 here.
type Padded struct {
	A int32
	B float64
	C [2]struct {
		D int8
		E float64
	}
	F int32
}

// relayoutWorld is the world of the relayout fixtures: entities of Padded and Position, a few
// of them removed, and some of them for an entity section.
func relayoutWorld() (*ecs.World, []ecs.Entity) {
	w := fuzzWorld() // every test type, so that the fixtures serve FuzzDecode as seeds
	m := ecs.NewMap2[Padded, Position](w)
	var es []ecs.Entity
	for i := range 40 {
		f := float64(i)
		p := Padded{A: int32(-i), B: f / 3, F: int32(i * 1000)}
		p.C[0].D, p.C[0].E = int8(i), -f
		p.C[1].D, p.C[1].E = -int8(i), f*f
		es = append(es, m.NewEntity(&p, &Position{f, -f}))
	}
	for i := 0; i < len(es); i += 7 {
		w.RemoveEntity(es[i])
	}
	return w, es[1:6]
}

func relayoutFixture(arch string) string { return filepath.Join("testdata", "relayout-"+arch+".pecs") }
func relayoutSection(arch string) string {
	return filepath.Join("testdata", "relayout-"+arch+".section")
}

// TestWriteRelayoutFixtures writes the fixtures of this host's architecture when
// ARKSAVE_WRITE_FIXTURES is set: GOARCH=386 and GOARCH=amd64 each write theirs.
func TestWriteRelayoutFixtures(t *testing.T) {
	if os.Getenv("ARKSAVE_WRITE_FIXTURES") == "" {
		t.Skip("set ARKSAVE_WRITE_FIXTURES=1 to write the fixtures of " + runtime.GOARCH)
	}
	w, section := relayoutWorld()
	var buf bytes.Buffer
	expectNoError(t, archetype.Encode(&buf, w, archetype.Timestamp(testTime)), "Encode")
	expectNoError(t, os.WriteFile(relayoutFixture(runtime.GOARCH), buf.Bytes(), 0o644), "write")
	sec, err := archetype.AppendEntities(nil, w, section)
	expectNoError(t, err, "AppendEntities")
	expectNoError(t, os.WriteFile(relayoutSection(runtime.GOARCH), sec, 0o644), "write")
}

// A file and an entity section written on a host of another word size load exactly: a raw type
// whose fields are the same but sit at other offsets is copied field by field. (amd64 reads
// 386's fixtures, 386 amd64's: GOARCH=386 go test ./archetype.)
func TestRelayoutAcrossHosts(t *testing.T) {
	other := map[string]string{"amd64": "386", "386": "amd64"}[runtime.GOARCH]
	if other == "" {
		t.Skip("fixtures for amd64 and 386 only")
	}
	want, section := relayoutWorld()
	data, err := os.ReadFile(relayoutFixture(other))
	expectNoError(t, err, "fixture")
	got := fuzzWorld()
	expectNoError(t, archetype.Decode(bytes.NewReader(data), got), "Decode of "+other+"'s file")
	expectSameWorld(t, want, got)

	// The world written here is the one written there, but for the type sizes.
	again := fuzzWorld()
	var buf bytes.Buffer
	expectNoError(t, archetype.Encode(&buf, got, archetype.Timestamp(testTime)), "Encode")
	expectNoError(t, archetype.Decode(&buf, again), "Decode")
	expectSameWorld(t, want, again)

	sec, err := os.ReadFile(relayoutSection(other))
	expectNoError(t, err, "section fixture")
	into := fuzzWorld()
	created, err := archetype.DecodeEntities(sec, into)
	expectNoError(t, err, "DecodeEntities of "+other+"'s section")
	expectEqual(t, len(section), len(created), "entities of the section")
	pm, wm := ecs.NewMap[Padded](into), ecs.NewMap[Padded](want)
	for i := range min(len(created), len(section)) {
		expectEqual(t, *wm.Get(section[i]), *pm.Get(created[i]), fmt.Sprintf("Padded of section entity %d", i))
	}
}
