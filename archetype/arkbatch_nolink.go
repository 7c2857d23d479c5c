//go:build arksave_nolinkname

package archetype

import "github.com/mlange-42/ark/ecs"

// arkLinked tells that arkNewEntities is not linked: the program is built with the tag
// arksave_nolinkname, and Decode creates entities through Ark's public calls only.
const arkLinked = false

// arkNewEntities is never called in this build: batchCreation reports false.
func arkNewEntities(w *ecs.World, count int, ids []ecs.ID, relations []arkRelation, archetype uint32) (table uint32, start int, arch uint32) {
	panic("archetype: batch creation without the linked Ark function")
}
