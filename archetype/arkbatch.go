package archetype

import (
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/mlange-42/ark/ecs"
)

// Batch creation for component IDs known only at run time.
//
// Ark creates a batch of entities into one table with a single allocation of the table's
// columns (the typed ecs.MapN.NewBatch), but offers it only for component types known at
// compile time. Decode knows its types at run time. Entity by entity (Unsafe().NewEntityRel,
// World.CopyEntity) a table doubles its capacity again and again as entities arrive, which costs
// about half of Decode's time and leaves the old arrays as garbage (1.8x the world's component
// bytes). So Decode calls the function behind NewBatch, World.newEntities, directly: one call
// per table, which sizes the table once from the file's count.
//
// This reaches into Ark's unexported code, so it is used only when it is known to be safe: the
// program is built with exactly the Ark version this was written against (see arkVersion),
// and a probe at first use checks that the call creates entities
// with the crafted pool's ids, in its tables and with its relation targets. Otherwise, and
// whenever the target world has observers (which NewBatch would notify and this call does not),
// Decode creates entities with Ark's public calls. Decode also registers relation targets again
// once every entity exists (see decoder.registerTargets).
//
// Upgrading Ark: TestBatchCreationIsUsed fails when the version differs; check newEntities and
// relationID in the new version, then update arkBatchVersion. A version without a function of
// that name fails to link, loudly, rather than running without it; a program that must build
// against such a version builds with the tag arksave_nolinkname, which leaves this path out
// (arkbatch_link.go) and decodes through Ark's public calls only.

// arkBatchModule and arkBatchVersion are the Ark module and version whose World.newEntities
// and relationID this file mirrors.
const (
	arkBatchModule  = "github.com/mlange-42/ark"
	arkBatchVersion = "v0.8.3"
)

// arkRelation has the memory layout of Ark's relationID: a relation component and its target.
type arkRelation struct {
	target    ecs.Entity
	component ecs.ID
}

// batchCreation reports whether Decode may create entities with arkNewEntities.
var batchCreation = sync.OnceValue(func() bool {
	return arkLinked && arkVersion() == arkBatchVersion && probeBatch()
})

// arkVersion returns the version of the Ark module the program is built with, or "" when it
// cannot be told (Ark replaced by a directory or vendored). It asks the build information,
// which test binaries do not carry; failing that, the source path of one of Ark's functions,
// which names the module's version in the module cache (and with -trimpath).
func arkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == arkBatchModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	pc := reflect.ValueOf(ecs.NewWorld).Pointer()
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return ""
	}
	file, _ := fn.FileLine(pc)
	file = filepath.ToSlash(file)
	_, rest, ok := strings.Cut(file, arkBatchModule+"@")
	if !ok {
		return ""
	}
	version, _, _ := strings.Cut(rest, "/")
	return version
}

// Types of the probe world.
type (
	batchProbe    struct{ V uint64 }
	batchProbeRel struct{ ecs.RelationMarker }
)

// probeBatch creates entities the way Decode does, with arkNewEntities in a world loaded with a
// crafted pool, and checks through Ark's public API that they have the crafted ids in order,
// the components and the relation target asked for, and that Ark cleans up the relation when
// the target, created after them, is removed. A panic is a failed probe.
func probeBatch() (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	w := ecs.NewWorld()
	probe := ecs.ComponentID[batchProbe](w)
	rel := ecs.ComponentID[batchProbeRel](w)
	// Slots 2..6; the batch gets 4, 2, 5 in that order, then the target 6; 3 stays free.
	p := pool{
		slots:     []slot{{0, ^uint32(0)}, {1, ^uint32(0)}, {2, 7}, {0, 1}, {4, 0}, {5, 3}, {6, 2}},
		next:      3,
		available: 1,
		alive:     []uint32{4, 2, 5, 6},
	}
	if p.check() != "" {
		return false
	}
	gens := make([]uint32, len(p.slots))
	for i, s := range p.slots {
		gens[i] = s.gen
	}
	dump := p.dump()
	w.Unsafe().LoadEntities(&dump)
	target := entityOf(slot{6, gens[6]})
	ids, rels := []ecs.ID{probe, rel}, []arkRelation{{target: target, component: rel}}
	arkNewEntities(w, 3, ids, rels, 0)
	arkNewEntities(w, 1, nil, nil, 0) // the target
	arkNewEntities(w, 0, ids, rels, 0)
	want := []ecs.Entity{entityOf(slot{4, gens[4]}), entityOf(slot{2, gens[2]}), entityOf(slot{5, gens[5]})}
	if !probeHas(w, probe, rel, want, target) || w.Stats().Entities.Used != 4 || w.Stats().Entities.Recycled != 1 {
		return false
	}
	w.RemoveEntity(target)
	return probeHas(w, probe, rel, want, ecs.Entity{})
}

// probeHas reports whether the probe entities are want, in order, with zero probe values and
// the relation target given.
func probeHas(w *ecs.World, probe, rel ecs.ID, want []ecs.Entity, target ecs.Entity) bool {
	q := ecs.NewUnsafeFilter(w, probe).Query()
	var got []ecs.Entity
	for q.Next() {
		if q.GetRelation(rel) != target || *(*batchProbe)(q.Get(probe)) != (batchProbe{}) {
			q.Close()
			return false
		}
		got = append(got, q.Entity())
	}
	return slices.Equal(got, want)
}
