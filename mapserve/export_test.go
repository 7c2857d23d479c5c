package mapserve

// The tests outside the package read the page's JSON with the names the
// package uses for it.
type Entity = entity

const (
	KindBody         = kindBody
	KindEntity       = kindEntity
	KindPlayer       = kindPlayer
	PlacedRegistered = placedRegistered
	PlacedFields     = placedFields
	PlacedChunk      = placedChunk
	TileSize         = tileSize
	MaxLevel         = maxLevel
)
