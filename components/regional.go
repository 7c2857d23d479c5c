package components

// Regional marks an entity of any archetype that lives in the chunk it
// stands in: it is saved with that chunk, not in the world file, unloaded
// (despawned) when the chunk unloads and spawned again, with every
// component it had, when the chunk loads. A pixel body with [Persistable]
// is one (the plugin gives it a Regional with the body's id).
//
// Where an entity stands is read from a position component that the game
// registers with the plugin (arksave.Position; PixelBody needs none). An
// entity with Regional but without a registered position component stays
// where it was first placed (or, never placed, is saved nowhere: register
// its position).
//
// ID is the entity's stable id: it survives saves, loads and chunk
// reloads, while the ecs.Entity changes at every spawn. Zero asks the
// plugin for a fresh one (from [BodyIDs]) at its next tick. IDs must be
// unique: a copy of a regional entity (ecs.World.CopyEntity) must get a
// new Regional. References between regional entities inside components
// (ecs.Entity fields) are saved by stable id, see arksave's documentation
// of regional entities.
type Regional struct {
	ID uint64
}

// Player marks an entity that belongs to a player: it is saved apart from
// the world, in the save's players file, never with a chunk nor in the
// world file, and it is spawned only when the game asks
// (arksave.Persistence.LoadPlayer). Every entity with the same ID (an
// avatar, its inventory's items) makes up that player's record and is saved
// and loaded together; references between them are kept exactly.
//
// ID is the stable player id the game gives (an account name): at most 255
// bytes, not empty.
type Player struct {
	ID string
}
