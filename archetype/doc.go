// Package archetype is the PECS codec: it saves a whole Ark world ([github.com/mlange-42/ark])
// to a compact binary file in struct-of-arrays layout and loads it back exactly.
//
// # Outline
//
//   - [Encode] writes a world; [Decode] reads one into a fresh or reset world prepared as for
//     ark-serde (component types registered, resources added as placeholders).
//   - [Option]s: [Timestamp] for deterministic output, [SkipComponents], [SkipEntitiesWith],
//     [Transient], [SkipResources], [WithoutResources], [LZ4] compression, [Alias] for renamed
//     types, [TypeVersion] and [Migrate] for changed types, [IgnoreUnknownTypes].
//   - [ReadInfo] describes a file and checks it without a world; [ExportJSON] writes the world a
//     file holds as JSON without the Go types. The arksave command's inspect and export use them.
//   - Errors: [ErrCorrupt], [ErrVersion], [ErrUnknownType], [ErrWorldNotEmpty], [ErrBigEndian].
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
// The type registry lists components (sorted by name) before resources (sorted by name); tables
// list their components in registry order. A type's flags say how its columns are stored
// ([TypeRaw], [TypeZeroSized], [TypeTransient]) and whether it is a [TypeRelation] or a
// [TypeResource]. Raw types carry a schema (field names, kinds, offsets, sizes; nested structs
// and arrays), so that a file can be read by field name without the Go types.
//
// A table's entity ids are its run of the pool's alive list: alive ids are listed table after
// table, row after row. They sit in the pool section, ahead of all column data, because Decode
// must know every id before it creates the first entity (see below).
//
// With [FlagLZ4], a blob whose stored size is smaller than its raw size is an LZ4 block.
//
// Differences from seed 002: the header keeps the file size and a CRC in its reserved bytes;
// every section and every column has its own CRC32C, checked before its contents are used; the
// per-archetype stable ids became the pool section's alive list (Ark ids with generations, not
// 128-bit ids); type indices replace repeated 128-bit type ids inside tables; the footer's
// fields add up to 32 bytes (the seed's reserved 12 became 8).
//
// # Plain-old-data columns and endianness
//
// A component type without pointers, strings, slices, maps, interfaces, channels or functions
// anywhere inside is written as the raw memory of its Ark column, copied in one piece; Decode
// reads it straight back into the new column. This assumes a little-endian host, where memory
// is the file's byte order; on a big-endian host Encode and Decode fail with [ErrBigEndian]. The
// schema pins the layout: Decode refuses a raw column whose stored schema differs from the
// registered type's at the same type version ([ErrVersion]).
//
// # msgpack values
//
// Other component types and all resources are msgpack values: structs as maps from exported
// field name to value (msgpack tags are honoured), map keys sorted, ecs.Entity as the extension
// type [EntityExtID]. Pointers are followed and restored as new values (two components sharing a
// pointer get one copy each); unexported fields of such types are not saved. The package
// registers its entity extension and sorted encoders for the map types inside saved types with
// msgpack's global registry. Flat structs (only exported fields of the built-in string, bool and
// number types, no tags) bypass msgpack's reflection with a built-in codec that writes the very
// bytes msgpack writes for them; a msgpack encoder a program registers for such a type is not
// used.
//
// Types are identified by full name: package path and type name. Two types declared inside
// functions of the same package with the same name share a full name; do not use such types
// as components or resources of one world.
//
// # Decoding at speed, with exact ids
//
// Ark has no public batch creation for component IDs known only at run time. Decode gives Ark's
// LoadEntities a crafted pool in which every slot is free and the free list runs through the
// saved alive ids in file order, then on into the saved free list. It creates the first entity
// of each table with its components and relation targets, the rest as copies of it (no table
// lookup), each receiving the next saved id, and then overwrites whole columns: one copy for raw
// columns, msgpack decoding in place for the others. When the last entity exists, the pool's
// free list, next and available equal the saved ones.
//
// # Streaming and memory
//
// Encode writes through a buffer; it keeps in memory only the msgpack-encoded columns and
// resources (and with [LZ4] the compressed blobs), because the archetype table gives every
// column's size before the data. Decode reads front to back through a buffer; raw columns go
// straight into the world's memory, other columns pass through one reusable buffer. Lengths are
// checked against the file size the header gives, and buffers grow only as bytes arrive.
package archetype
