package plugin

import (
	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/components"
)

// Locator tells the runtime where regional entities with one position
// component type stand. NewLocator makes one; the runtime binds it to its
// world.
type Locator interface {
	// Comp is the position component.
	Comp() ecs.Comp
	// Bind prepares the queries of a world; without lists the position
	// components of the locators before this one, whose entities this one
	// leaves to them.
	Bind(w *ecs.World, without []ecs.Comp) BoundLocator
}

// BoundLocator is a Locator bound to a world.
type BoundLocator interface {
	// Placed calls fn for every placed regional entity whose position is
	// this locator's.
	Placed(fn func(e ecs.Entity, reg *components.Regional, h *Home, x, y float64))
	// Fresh calls fn for every regional entity not placed yet.
	Fresh(fn func(e ecs.Entity, reg *components.Regional, x, y float64))
	// At returns the position of e, if e has the component.
	At(e ecs.Entity) (x, y float64, ok bool)
}

// NewLocator returns the Locator of position component T, read with xy.
func NewLocator[T any](xy func(*T) (x, y float64)) Locator { return &locator[T]{xy: xy} }

type locator[T any] struct {
	xy func(*T) (x, y float64)
}

func (l *locator[T]) Comp() ecs.Comp { return ecs.C[T]() }

func (l *locator[T]) Bind(w *ecs.World, without []ecs.Comp) BoundLocator {
	excl := append([]ecs.Comp{ecs.C[components.Player]()}, without...)
	return &bound[T]{
		xy:      l.xy,
		placedQ: ecs.NewFilter3[components.Regional, Home, T](w).Without(excl...),
		freshQ:  ecs.NewFilter2[components.Regional, T](w).Without(append(excl, ecs.C[Home]())...),
		m:       ecs.NewMap[T](w),
	}
}

type bound[T any] struct {
	xy      func(*T) (x, y float64)
	placedQ *ecs.Filter3[components.Regional, Home, T]
	freshQ  *ecs.Filter2[components.Regional, T]
	m       *ecs.Map[T]
}

func (b *bound[T]) Placed(fn func(e ecs.Entity, reg *components.Regional, h *Home, x, y float64)) {
	q := b.placedQ.Query()
	for q.Next() {
		reg, h, p := q.Get()
		x, y := b.xy(p)
		fn(q.Entity(), reg, h, x, y)
	}
}

func (b *bound[T]) Fresh(fn func(e ecs.Entity, reg *components.Regional, x, y float64)) {
	q := b.freshQ.Query()
	for q.Next() {
		reg, p := q.Get()
		x, y := b.xy(p)
		fn(q.Entity(), reg, x, y)
	}
}

func (b *bound[T]) At(e ecs.Entity) (float64, float64, bool) {
	if !b.m.Has(e) {
		return 0, 0, false
	}
	x, y := b.xy(b.m.Get(e))
	return x, y, true
}

// BodyLocator is the position of pixel bodies: their blitted origin.
var BodyLocator = NewLocator(func(b *components.PixelBody) (float64, float64) { return float64(b.X), float64(b.Y) })

// Home is the plugin's note on a placed regional entity: the chunk it is
// saved with. It is never saved itself (the chunk's record is where the
// entity is).
type Home struct {
	Pos components.ChunkPos
}

// SavedApart lists the components whose entities the world file leaves
// out because the runtime saves them elsewhere: regional entities (with
// their chunk) and players (in the players files).
func SavedApart() []ecs.Comp {
	return []ecs.Comp{ecs.C[components.Regional](), ecs.C[components.Player](), ecs.C[Home]()}
}

// Register registers the runtime's components in w.
func Register(w *ecs.World) {
	ecs.ComponentID[components.Regional](w)
	ecs.ComponentID[components.Player](w)
	ecs.ComponentID[Home](w)
}
