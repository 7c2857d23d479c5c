// Package archetype is the PECS codec: it saves a whole Ark world ([github.com/mlange-42/ark])
// to a compact binary file in struct-of-arrays layout and loads it back exactly.
//
// # Outline
//
//   - [Encode] writes a world, [AppendEncode] appends its file to a byte slice; [Decode] reads
//     one into a fresh or reset world prepared as for ark-serde (component types registered,
//     resources added as placeholders).
//   - [Option]s: [Timestamp] for deterministic output, [SkipComponents], [SkipEntitiesWith],
//     [Transient], [SkipResources], [WithoutResources], [LZ4] compression, [Alias] for renamed
//     types, [TypeVersion] and [Migrate] for changed types, [IgnoreUnknownTypes], [Key] to
//     encrypt with AES-256-GCM ([ErrEncrypted] without the key, [ErrWrongKey] with another).
//   - [AppendEntities] writes an entity section, [DecodeEntities] reads one into a live world:
//     chosen entities (those that stand in one chunk, one player) instead of a whole world, with
//     ecs.Entity values stored as references ([StableRefs]); see section.go.
//   - [Check] refuses, before anything is written, the component and resource types a save could
//     not bring back exactly; [Register] and [RegisterName] name the concrete types that values
//     behind interfaces hold.
//   - [ExportJSON] writes the world a file holds as JSON without the Go types, and
//     [ImportJSON] turns that JSON (edited or not) back into a file: the same bytes when it was
//     not edited; [ExportSectionJSON] writes an entity section's entities the same way. The
//     arksave command's export and import use them (its inspect and check read every
//     value of a file without a world, through this module's internal/pecs), and its map (serve) shows
//     regional entities through ExportSectionJSON.
//   - Errors: [ErrCorrupt], [ErrVersion], [ErrUnknownType], [ErrIncompatible],
//     [ErrUnsupportedType], [ErrCycle], [ErrWorldNotEmpty], [ErrBadJSON].
//
// # Faithful or refused
//
// A component or resource type is either saved so that every value of it comes back exactly
// (reflect.DeepEqual after Decode; pointers compare by what they point to), or refused, by
// [Check] at start-up and by [Encode] before it writes anything, with an error matching
// [ErrUnsupportedType] that names the type, the field path (Enemy.AI.target), why, and the ways
// out. The rules:
//
//   - Every field is saved, exported or not, for every type: plain-old-data types (raw memory)
//     and the others alike. Embedded fields are fields; a nil embedded pointer stays nil.
//   - Values behind interfaces (any, rand.Source, a game's Shape) are saved with the name of their
//     concrete type, which Decode must find: register the game's own types once with [Register]
//     (as with encoding/gob); the built-in numbers, string, bool, time.Time, time.Duration,
//     ecs.Entity and math/rand/v2's *PCG and *ChaCha8 need nothing, nor do slices, arrays, maps and
//     pointers of known types. An int in an any comes back an int, a []int a []int.
//   - A type with its own encoding, encoding.BinaryMarshaler and BinaryUnmarshaler or
//     msgpack.CustomEncoder and CustomDecoder (or msgpack.Marshaler and Unmarshaler), is saved
//     through those methods; a method promoted from an embedded field does not count.
//   - time.Time keeps its instant, zone offset and zone name, and its location where this
//     program has it (UTC, Local, or a location time.LoadLocation finds with the same zone; else a
//     fixed zone). The monotonic clock reading is not saved, as encoding/gob does not save it.
//   - Refused: channels, functions and unsafe.Pointer anywhere inside a type, and map keys that
//     hold pointers (they would not find their entries after loading).
//   - Refused too: values that must not be copied (go vet's copylocks), anywhere inside a type,
//     behind pointers included: sync.Mutex, RWMutex, WaitGroup, Once, Cond, Map and Pool, any
//     other type whose pointer has Lock and Unlock methods (a game's own lock), and structs that
//     hold a zero-sized such type as a noCopy marker. Saved, a mutex held while saving would load
//     held and a WaitGroup with a pending Add would load pending, and the loaded game would
//     deadlock; loading them as zero values instead would hide that the type was never saved.
//     Keep locks outside the components and resources that are saved (in a system, or a resource
//     left out), or mark the type transient; a type with its own encoding (below) may hold one.
//     The types of sync/atomic (atomic.Int64, atomic.Bool...) are plain data, read and written
//     whole: they are saved with their values. At Encode: a value behind
//     an interface whose type Decode could not find, a pointer cycle ([ErrCycle]: n.Next = n) and
//     values nested more than a thousand levels deep (a long linked list: save it as a slice).
//   - Pointers are followed and restored as new values: two places sharing a pointer get one copy
//     each, and slices sharing an array get their own arrays.
//   - Ways out: give the field a type that can be saved (an ecs.Entity instead of a pointer to
//     another entity's data, say), implement one of the encoding methods, register the concrete
//     types, or leave the type out with [Transient], [SkipComponents], [SkipEntitiesWith] or
//     [SkipResources].
//
// Decode checks the types a file records against the program's before the world changes: fields
// are matched by name, a new field stays zero, a dropped one is skipped, and a field whose kind
// changed (a string where the file has an int) is [ErrIncompatible], naming the type and field,
// as is a stored number that its field cannot hold exactly, naming the value too: an integer
// too large for it, or, in a float64 field that became a float32, a value that a float32 would
// round (0.1) or overflow (1e300); NaN and the infinities convert. Integers and floats do not
// convert into each other. A damaged file is [ErrCorrupt] instead.
//
// # What survives
//
// Entity ids and generations, including Ark's whole entity pool with its dead and recycled slots,
// so that ecs.Entity values stored in components and relation targets stay valid and handles to
// dead entities stay dead; every component (raw memory for plain-old-data types, msgpack for the
// rest); relation targets, per Ark table; zero-sized marker components; resources.
//
// # File layout
//
// Little-endian throughout. The same world gives the same bytes (map keys in msgpack values are
// sorted; the timestamp is fixed with [Timestamp]). The constants in format.go give every size;
// they are part of the file format.
//
//	┌──────────────────────────────────────────────────────────────────────────────┐
//	│ header, 64 bytes                                                             │
//	│   "PECS" │ major u16 │ minor u16 │ flags u32 │ entities u64                  │
//	│   archetypes u32 │ types u32 │ resources u32 │ timestamp ms i64              │
//	│   file size u64 │ reserved 12 │ CRC32C of bytes 0..60 u32                    │
//	├──────────────────────────────────────────────────────────────────────────────┤
//	│ type registry:  count u32 │ size u64 │ entries… │ CRC32C u32                 │
//	│   entry: type id [16] (FNV-1a 128 of the full name)                          │
//	│          name (u16 length, UTF-8) │ type version u32 │ flags u32             │
//	│          size hint u32 │ schema (u32 length, bytes)                          │
//	│   components, then resources, then the concrete types of interface values    │
//	├──────────────────────────────────────────────────────────────────────────────┤
//	│ archetype table:  count u32 │ size u64 │ entries… │ CRC32C u32               │
//	│   entry (one per Ark table): archetype id u64 │ entities u32                 │
//	│          components u16 │ type index u16 × n                                 │
//	│          relations u16 │ (type index u16, target id u32, target gen u32) × r │
//	│          data offset u64 │ data size u64                                     │
//	│          columns u16 │ (raw size u64, stored size u64) × c                   │
//	├──────────────────────────────────────────────────────────────────────────────┤
//	│ entity pool:  slots u32 │ size u64 │ next u32 │ available u32 │ alive u32    │
//	│   slots × (id or free-list link u32, generation u32)                         │
//	│   alive ids u32 × alive, table after table, row after row │ CRC32C u32       │
//	├──────────────────────────────────────────────────────────────────────────────┤
//	│ entity data, table after table in archetype-table order (SoA):               │
//	│   per component with data, a column blob: stored bytes │ CRC32C u32          │
//	│     raw types: count × size bytes of memory; others: count msgpack values    │
//	├──────────────────────────────────────────────────────────────────────────────┤
//	│ resources:  count u32 │ size u64 │ CRC32C u32 after the resources            │
//	│   per resource: type index u16 │ raw size u64 │ stored size u64 │ msgpack    │
//	├──────────────────────────────────────────────────────────────────────────────┤
//	│ footer, 32 bytes: checksum type u32 (1 = CRC32C)                             │
//	│   checksum u64 (CRC32C of everything before the footer)                      │
//	│   file size u64 │ "SCEP" │ reserved 8                                        │
//	└──────────────────────────────────────────────────────────────────────────────┘
//
// The type registry lists components, then resources, then (format 2.0) the concrete types that
// values behind interfaces hold ([TypeConcrete]), each group sorted by name; tables list their
// components in registry order. A type's flags say how its columns are stored ([TypeRaw],
// [TypeZeroSized], [TypeTransient]) and whether it is a [TypeRelation], a [TypeResource] or a
// [TypeConcrete] type. Raw types carry a schema (field names, kinds, offsets, sizes; nested
// structs and arrays), so that a file can be read by field name without the Go types; in format
// 2.0 every type stored as msgpack carries a value schema (value_schema.go), against which
// the inspect and check commands check every stored value and Decode checks the program's types.
//
// A table's entity ids are its run of the pool's alive list: alive ids are listed table after
// table, row after row. They sit in the pool section, ahead of all column data, because Decode
// must know every id before it creates the first entity (see below).
//
// With [FlagLZ4], a blob whose stored size is smaller than its raw size is an LZ4 block.
//
// An encrypted file ([Key], header flag 0x20) keeps its 64-byte header in plaintext and holds,
// between it and a footer over the bytes as stored, a random 12-byte nonce and the AES-256-GCM
// ciphertext of what the plaintext file holds between its header and footer, the header being the
// associated data; see crypt.go.
//
// Every section and every column has its own CRC32C, checked before its contents are used;
// entity ids are the pool section's alive list (Ark ids with generations), and tables refer to
// types by their index in the registry. The footer is 32 bytes: 4 + 8 + 8 + 4 for its fields and
// 8 reserved (a layout with 12 reserved bytes would make it 36).
//
// [docs/format.md] is the reference of the file formats (this one, the chunk store and the save
// directory): their versions and what this module promises about reading older files.
//
// # Plain-old-data columns and endianness
//
// A component type without pointers, strings, slices, maps, interfaces, channels or functions
// anywhere inside, and without a lock (see above, refused), is written as the raw memory of its Ark column, copied in one piece; Decode
// reads it straight back into the new column. On a little-endian host memory is the file's
// byte order. A big-endian host swaps the bytes of every multi-byte scalar on the way: Encode
// writes a swapped copy of each raw column, Decode swaps each column in place after reading it,
// field by field after the Go type's layout (offsets and sizes from reflect; nested arrays and
// structs, complex numbers as two floats, ecs.Entity as two uint32; padding untouched). The
// entity pool is handled the same way, and values stored as msgpack never depend on the host.
// So a file opens on any host, whichever wrote it. The schema pins the layout. When the stored
// schema has the same fields, in the same order, of the same kinds and array lengths as the
// registered type's, and differs only in offsets and padding (another alignment: a 64-bit host's
// file read on a 32-bit one, where a float64 after an int32 sits at 4, not 8), Decode copies
// each value field by field into the host's layout. Any other difference at the same type
// version is refused: a field of the same name whose type changed (an int64 that became an
// int32, a float32 or a string, an array of another length) is [ErrIncompatible], naming the
// type, the field path and both types; fields added, dropped, renamed or reordered are
// [ErrVersion], naming both layouts. An int, uint or uintptr field, whose size follows the host,
// is such a changed field between 32-bit and 64-bit hosts: use fixed-size integers in
// components meant to move between them. Raw values are not converted as msgpack values are: a
// migration ([TypeVersion], [Migrate]) converts them.
//
// # msgpack values
//
// Other component types and all resources are msgpack values, written by a plan compiled once per
// Go type (value.go has the wire form of every kind): structs as maps from field name to value,
// every field included, map keys sorted by their encoding, ecs.Entity as the extension type
// 69 (entityExtID), values behind interfaces as their type's name and the value. The bytes are
// msgpack, so a file can be read without the Go types ([ExportJSON], [Migrate]). Format 1.0
// files, written by msgpack's own reflection (exported fields only), are read as they were.
//
// # JSON
//
// [ExportJSON] walks every value by the schema its type has in the file and writes it in a
// form that reads back to the same bits: 64-bit integers exact, floats in their shortest exact
// form (NaN payloads, infinities and minus zero kept), strings that are not UTF-8 and byte
// slices as base64, maps with keys that are not strings as [key, value] pairs, values behind
// interfaces as {"type", "value"} (jsonvalue.go lists every form). The registry's schemas, the
// whole entity pool, relation targets, flags and the timestamp go along, so [ImportJSON] writes
// the file again byte for byte, in the form Encode writes: map entries sorted, the shortest
// integers where Encode writes them. The JSON's "format" ("pecs-json 1") is versioned apart from
// the file's.
//
// Types are identified by full name: package path and type name. Two types declared inside
// functions of the same package with the same name share a full name; do not use such types
// as components or resources of one world.
//
// # Decoding at speed, with exact ids
//
// Decode gives Ark's LoadEntities a crafted pool in which every slot is free and the free list
// runs through the saved alive ids in file order, then on into the saved free list. It then
// creates each table's entities, each receiving the next saved id, and overwrites whole
// columns: one copy for raw columns, msgpack decoding in place for the others. When the last
// entity exists, the pool's free list, next and available equal the saved ones.
//
// Ark creates a batch of entities in one table with one allocation of the table's columns, but
// offers that only for component types known at compile time (ecs.MapN.NewBatch). Decode calls
// the function behind it with the file's count, so each table is sized once (arkbatch.go says
// when that is safe: the program is built with Ark v0.8.3, and a probe checks the call at first
// use). Otherwise, and when the target world has observers, it creates the first entity of each
// table with its components and relation targets and the rest as copies of it, and Ark's
// tables double their capacity as entities arrive.
//
// # Streaming and memory
//
// Encode gathers everything before the first byte, so it knows the file's size: a writer in
// memory (a bytes.Buffer or any writer with a Grow method) and [AppendEncode]'s slice grow once,
// to exactly that size; other writers get the file through a buffer. A bytes.Buffer is filled
// in place, through its ReadFrom. Into a file of 1 MiB or more in memory, on amd64, each column
// is checksummed and copied in one pass with non-temporal stores, which do not read the new
// memory into the cache before overwriting it. Encode keeps in memory
// only the msgpack-encoded columns and resources (and with [LZ4] the compressed blobs), because
// the archetype table gives every column's size before the data. Decode reads front to back
// through a buffer; raw columns go straight into the world's memory, other columns pass through
// one reusable buffer. Lengths are checked against the file size the header gives, and buffers
// grow only as bytes arrive.
//
// [docs/format.md]: https://github.com/arksave/arksave/blob/main/docs/format.md
package archetype
