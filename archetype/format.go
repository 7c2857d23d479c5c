package archetype

import "hash/crc32"

// The constants below are part of the PECS file format: changing any of them changes the bytes
// of every file, so they only change together with [VersionMajor] or [VersionMinor]. The layout
// they describe is drawn in the package documentation.

// Format version: entity sections ([AppendEntities]) are written as VersionMajor.VersionMinor,
// world files ([Encode]) as VersionMajor.WorldVersionMinor. A reader accepts files of its own
// major version whose minor version is not newer than its own, and files of format 1.0;
// anything else is [ErrVersion].
//
// 2.0 changed how values that are not plain-old-data are written (every field, exported or not;
// values behind interfaces with their type's name; time.Time with its zone; see value.go) and
// gave every such type a value schema in the registry, plus registry entries for the concrete
// types behind interfaces ([TypeConcrete]). 1.0 files are read as before, through msgpack's own
// reflection.
//
// 2.1 added entity sections ([FlagSection], [AppendEntities]): a file of chosen entities with a
// reference table in place of the entity pool. World files use nothing of 2.1 and are still
// written as 2.0 (worldMinor); sections are written as 2.1.
const (
	VersionMajor = 2 // bumped for changes that older readers cannot read
	VersionMinor = 1 // bumped for additions that older readers would misread

	// WorldVersionMinor is the minor version [Encode] writes world files
	// with: 2.1 added only entity sections, so world files are still 2.0.
	WorldVersionMinor = 0

	oldestMajor = OldestVersionMajor
	worldMinor  = WorldVersionMinor
)

// OldestVersionMajor is the oldest format major version this package reads: 1, as 1.0.
const OldestVersionMajor = 1

// Header flags (header bytes 8..12).
const (
	// FlagLZ4 says that column and resource blobs may be LZ4 block-compressed
	// (a blob is compressed exactly when its stored size is smaller than its raw size).
	FlagLZ4 uint32 = 0x0001
	// FlagSection marks an entity section (format 2.1): chosen entities of a world, with a
	// reference table instead of the entity pool and no resources (see [AppendEntities]).
	FlagSection uint32 = 0x0002
	// FlagCompactPool marks a world file whose entity pool is written without its free slots
	// (format 2.1, [CompactPool]): a bitmap of the alive slots, the alive ids and their
	// generations, and one generation for every free slot.
	FlagCompactPool uint32 = 0x0004

	knownFlags = FlagLZ4 | FlagSection | FlagCompactPool | flagEncrypted
)

// Type flags of a type-registry entry.
const (
	TypeTransient uint32 = 0x0001 // component whose membership is saved but whose data is not
	TypeResource  uint32 = 0x0002 // world resource, not a component
	TypeZeroSized uint32 = 0x0004 // zero-sized type (marker): never any data
	TypeRaw       uint32 = 0x0008 // plain-old-data: column stored as raw little-endian memory, with a schema
	TypeRelation  uint32 = 0x0010 // Ark relation component: tables carry a target entity for it
	TypeConcrete  uint32 = 0x0020 // a type that values behind interfaces hold (format 2.0): listed for its schema

	knownTypeFlagsV1 = TypeTransient | TypeResource | TypeZeroSized | TypeRaw | TypeRelation
	knownTypeFlags   = knownTypeFlagsV1 | TypeConcrete
)

// Checksum types of the footer.
const (
	ChecksumCRC32C uint32 = 1 // CRC-32 with the Castagnoli polynomial, in the low 32 bits
)

const (
	magic    = "PECS" // 4 bytes: first bytes of every file
	magicEnd = "SCEP" // 4 bytes: last magic, in the footer

	headerSize      = 64 // magic 4, major 2, minor 2, flags 4, entities 8, archetypes 4, types 4, resources 4, timestamp 8, file size 8, reserved 12, crc 4
	headerCRCOffset = 60 // header CRC32C covers bytes [0, 60)
	footerSize      = 32 // checksum type 4, checksum 8, file size 8, magic 4, reserved 8

	sectionHeadSize = 12 // every section starts with: count u32, section size u64 (head and trailing CRC included)
	crcSize         = 4  // every section and every column blob ends with a CRC32C of its bytes

	typeIDSize      = 16                             // FNV-1a 128-bit hash of the type's full name
	typeFixedSize   = typeIDSize + 2 + 4 + 4 + 4 + 4 // id, name length, version, flags, size hint, schema length
	entryFixedSize  = 8 + 4 + 2 + 2 + 8 + 8 + 2      // archetype id, entities, components, relations, data offset, data size, columns
	entryCompSize   = 2                              // u16 type index per component
	entryRelSize    = 2 + 4 + 4                      // type index u16, target id u32, target generation u32
	entryColSize    = 8 + 8                          // raw size u64, stored size u64 per data column
	poolFixedSize   = 4 + 4 + 4                      // next u32, available u32, alive count u32
	poolSlotSize    = 8                              // id (or free-list link) u32, generation u32
	poolAliveSize   = 4                              // entity id u32 per alive entity, in table order
	compactFixed    = 4 + 4                          // compact pool: free generation u32, alive count u32
	resourceFixSize = 2 + 8 + 8                      // type index u16, raw size u64, stored size u64

	reservedEntities = 2 // Ark's reserved zero and wildcard entity slots at the start of the pool

	maxNameLen   = 1 << 12 // longest type name accepted
	maxSchemaLen = 1 << 16 // longest schema accepted
	maxLZ4Ratio  = 255     // LZ4 cannot expand a block by more than this: a match costs a byte per 255 bytes it repeats
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// verifyChecksums is false only in tests that fuzz the parsers behind the checksums: every
// check after a checksum must hold on its own, so that a file with valid checksums but hostile
// content is refused without a panic too.
var verifyChecksums = true
