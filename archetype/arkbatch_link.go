//go:build !arksave_nolinkname

package archetype

import (
	_ "unsafe" // for go:linkname

	"github.com/mlange-42/ark/ecs"
)

// arkLinked tells that arkNewEntities is Ark's own function (see arkbatch.go).
const arkLinked = true

// arkNewEntities is Ark's (*World).newEntities: it creates count entities with the given
// components and relation targets in one table, allocating once, and returns the table, the
// row of the first new entity and the archetype. It notifies no observers. archetype 0 means
// "find it".
//
//go:linkname arkNewEntities github.com/mlange-42/ark/ecs.(*World).newEntities
func arkNewEntities(w *ecs.World, count int, ids []ecs.ID, relations []arkRelation, archetype uint32) (table uint32, start int, arch uint32)
