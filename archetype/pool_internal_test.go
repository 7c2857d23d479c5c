package archetype

import (
	"math"
	"reflect"
	"testing"

	"github.com/mlange-42/ark/ecs"
)

// The crafted dump makes Ark hand out the saved ids in file order and leaves the pool exactly as
// saved once every entity exists.
func TestPoolDumpRecreatesThePool(t *testing.T) {
	src := ecs.NewWorld()
	var es []ecs.Entity
	for range 20 {
		es = append(es, src.NewEntity())
	}
	for _, i := range []int{3, 7, 8, 15} {
		src.RemoveEntity(es[i])
	}
	src.NewEntity() // recycles 15's slot
	want := src.Unsafe().DumpEntities()

	p := &pool{slots: append([]slot(nil), slotsOf(want.Entities)...), next: want.Next, available: want.Available, alive: want.Alive}
	if msg := p.check(); msg != "" {
		t.Fatal(msg)
	}
	order := append([]uint32(nil), p.alive...)
	dump := p.dump()
	dst := ecs.NewWorld()
	dst.Unsafe().LoadEntities(&dump)
	for _, id := range order {
		e := dst.NewEntity()
		if e.ID() != id || e.Gen() != p.slots[id].gen {
			t.Fatalf("got %v, want id %d gen %d", e, id, p.slots[id].gen)
		}
	}
	got := dst.Unsafe().DumpEntities()
	if !reflect.DeepEqual(want.Entities, got.Entities) || want.Next != got.Next || want.Available != got.Available {
		t.Errorf("pool differs:\nwant %+v\n got %+v", want, got)
	}
}

func TestPoolCheckRejects(t *testing.T) {
	reserved := []slot{{0, math.MaxUint32}, {1, math.MaxUint32}}
	valid := func() *pool {
		return &pool{slots: append(append([]slot(nil), reserved...), slot{2, 0}, slot{2, 1}), next: 3, available: 1, alive: []uint32{2}}
	}
	if msg := valid().check(); msg != "" {
		t.Fatalf("valid pool rejected: %s", msg)
	}
	cases := map[string]func(p *pool){
		"bad reserved slot":      func(p *pool) { p.slots[1].gen = 0 },
		"alive id out of range":  func(p *pool) { p.alive[0] = 9 },
		"alive reserved id":      func(p *pool) { p.alive[0] = 1 },
		"alive slot not its own": func(p *pool) { p.slots[2].id = 3 },
		"duplicate alive":        func(p *pool) { p.alive = []uint32{2, 2}; p.available = 0 },
		"free list out of range": func(p *pool) { p.next = 40 },
		"free list hits alive":   func(p *pool) { p.next = 2 },
	}
	for name, damage := range cases {
		p := valid()
		damage(p)
		if p.check() == "" {
			t.Errorf("%s: accepted", name)
		}
	}
}
