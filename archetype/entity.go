package archetype

import (
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

// slot is one entry of Ark's entity pool: for an alive entity its own id and generation, for a
// free one the next free id (the pool's implicit free list) and the generation it will get.
// It has the memory layout of ecs.Entity, checked at start-up.
type slot struct {
	id  uint32
	gen uint32
}

// entityOf builds the ecs.Entity with the slot's id and generation.
func entityOf(s slot) ecs.Entity { return *(*ecs.Entity)(unsafe.Pointer(&s)) }

// slotOf returns the id and generation of an entity.
func slotOf(e ecs.Entity) slot { return slot{id: e.ID(), gen: e.Gen()} }

// slotsOf views a slice of entities as pool slots, without copying.
func slotsOf(es []ecs.Entity) []slot {
	if len(es) == 0 {
		return nil
	}
	return unsafe.Slice((*slot)(unsafe.Pointer(&es[0])), len(es))
}

// entitiesOf views a slice of pool slots as entities, without copying.
func entitiesOf(ss []slot) []ecs.Entity {
	if len(ss) == 0 {
		return nil
	}
	return unsafe.Slice((*ecs.Entity)(unsafe.Pointer(&ss[0])), len(ss))
}

func init() {
	if unsafe.Sizeof(ecs.Entity{}) != unsafe.Sizeof(slot{}) {
		panic("archetype: ecs.Entity is not two uint32 values; this Ark version is not supported")
	}
	if e := entityOf(slot{id: 7, gen: 9}); e.ID() != 7 || e.Gen() != 9 {
		panic("archetype: ecs.Entity field order changed; this Ark version is not supported")
	}
}
