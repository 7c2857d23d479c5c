package archetype

import (
	"errors"
	"fmt"

	"github.com/arksave/arksave/internal/errs"
)

// ErrCorrupt is returned when a PECS file is damaged: a wrong magic number, a checksum that does
// not match, a length or count that points past the end of the input, input that ends early
// (the error then also matches [io.ErrUnexpectedEOF]), or values that contradict each other.
// The message names the section and the byte offset where the damage was found.
//
// Every ErrCorrupt of this module (archetype's, chunkstore's, autosave's) is
// also matched by the root package's arksave.ErrCorrupt.
var ErrCorrupt = errs.New("archetype: corrupt file", errs.Corrupt)

// ErrVersion is returned when a file was written by a newer, incompatible version of the format,
// or when a stored component or resource type has a different type version or memory layout than
// the type registered in the target world and no [Migrate] function bridges the two. A stored
// plain-old-data type one of whose fields changed type is [ErrIncompatible] instead, naming the
// field; ErrVersion is for fields added, dropped, renamed or moved.
var ErrVersion = errors.New("archetype: unsupported version")

// ErrUnknownType is returned when a file holds a component or resource type that the target world
// has not registered (see [Decode] for how to prepare the world, [Alias] for renamed types and
// [IgnoreUnknownTypes] to drop such types instead).
var ErrUnknownType = errors.New("archetype: unknown type")

// ErrWorldNotEmpty is returned when [Decode] is given a world that already holds entities,
// alive or recycled. Decode needs a fresh world or one cleared with [ecs.World.Reset].
var ErrWorldNotEmpty = errors.New("archetype: target world is not empty")

var errEntityExt = errors.New("archetype: entity extension must hold 8 bytes")

// ErrUnsupportedType is returned by [Check], [Encode] and the arksave plugin's Install when a
// component or resource type, or a value behind an interface, cannot be saved so that it comes
// back exactly: a channel, a function or an unsafe.Pointer anywhere inside it, a value that must
// not be copied (a sync.Mutex, RWMutex, WaitGroup, Once, Cond, Map or Pool, a type with Lock and
// Unlock methods: it would load locked or waiting), a map key that holds a pointer, a concrete type behind an interface that Decode could not find by name (see
// [Register]), or a value nested deeper than a thousand levels. The message names the type, the
// field path (Enemy.AI.target), why, and the ways out.
var ErrUnsupportedType = errors.New("archetype: type cannot be saved")

// ErrCycle is returned by [Encode] when a value refers back to itself through pointers, slices,
// maps or interfaces (n.Next = n): such a value cannot be written as a tree. It also matches
// [ErrUnsupportedType].
var ErrCycle = fmt.Errorf("%w: pointer cycle", ErrUnsupportedType)

// ErrIncompatible is returned by [Decode] when an intact file holds values that the game's types
// cannot take: a field whose stored type differs from the Go field's (a string where the game has
// an int), a number that its field cannot hold exactly (too large for an integer field, or a
// float64 that a float32 field would round or overflow), a value behind an interface whose type
// the program has not registered or that does not implement the interface. The message names the
// type and the field, and the value when a value is to blame. Unlike [ErrCorrupt], the file is fine: the program's types changed, and a
// [TypeVersion] with a [Migrate] function, or registering the type, lets the file load.
var ErrIncompatible = errors.New("archetype: stored types do not match the program's")

// ErrBadJSON is returned by [ImportJSON] when its input is not JSON that [ExportJSON] writes, or
// describes a world that no PECS file can hold: malformed JSON, a missing or unknown key, a value
// of the wrong kind for its type's schema, a number that does not fit, an entity the pool does
// not have alive. The message names the JSON path (tables[2].entities[0]["game.Pos"].X) and the
// byte offset of the value to blame.
var ErrBadJSON = errors.New("archetype: JSON does not describe a world")
