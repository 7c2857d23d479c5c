// Package pecs describes a PECS file (the archetype codec's world files and entity sections)
// without decoding it into a world: what the inspect, check and repair commands and the web map
// read of a file. The archetype codec fills it in: it registers its readers at init, so a
// program that reads through this package links the codec in (imports
// github.com/arksave/arksave/archetype) as every tool of this module does.
package pecs

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mlange-42/ark/ecs"
)

// Header is the fixed 64-byte start of a PECS file.
type Header struct {
	VersionMajor uint16 // format major version
	VersionMinor uint16 // format minor version
	Flags        uint32 // header flags, see archetype.FlagLZ4
	Entities     uint64 // alive entities saved
	Archetypes   uint32 // entries of the archetype table: one per Ark table (archetype and relation targets)
	Types        uint32 // entries of the type registry (components and resources)
	Resources    uint32 // resources saved
	Timestamp    int64  // milliseconds since the Unix epoch
	FileSize     uint64 // size of the whole file, footer included
}

// Info describes a PECS file without decoding it into a world: what `arksave inspect` prints.
type Info struct {
	Header    Header
	Types     []TypeInfo
	Tables    []TableInfo
	Resources []ResourceInfo
	Pool      PoolInfo     // a world file's entity pool
	Section   *SectionInfo // an entity section's references (nil for a world file)
	Checksum  ChecksumInfo
}

// TypeInfo is one entry of the type registry.
type TypeInfo struct {
	ID       [16]byte // FNV-1a 128 of Name
	Name     string   // full name: package path and type name
	Version  uint32   // type version, see archetype.Versioned
	Flags    uint32   // archetype.TypeTransient, TypeResource, TypeZeroSized, TypeRaw, TypeRelation, TypeConcrete
	Size     uint32   // memory size of the Go type when saved
	Encoding string   // "raw", "msgpack", "zero-sized" or "transient"
	Layout   string   // raw types: fields, kinds, offsets ("{X float64 @0, Y float64 @8}"); others: "{Name string, Tags []string}"
}

// TableInfo is one entry of the archetype table: an Ark table.
type TableInfo struct {
	ArchetypeID uint64         // hash of the component type ids
	Entities    uint32         // entities in the table
	Components  []string       // component type names
	Relations   []RelationInfo // relation targets
	DataOffset  uint64         // file offset of the table's columns
	DataSize    uint64         // bytes of the table's columns in the file, CRCs included
	RawSize     uint64         // bytes of the columns before compression
}

// RelationInfo is the target of one relation component of a table.
type RelationInfo struct {
	Component string
	Target    ecs.Entity
}

// ResourceInfo is one saved resource.
type ResourceInfo struct {
	Name       string
	RawSize    uint64 // msgpack bytes
	StoredSize uint64 // bytes in the file
}

// PoolInfo summarises the entity pool.
type PoolInfo struct {
	Slots uint32 // slots in the pool, Ark's two reserved ones included
	Alive uint32 // alive entities
	Free  uint32 // free slots waiting to be recycled
}

// ChecksumInfo is the verdict on the file's checksums.
type ChecksumInfo struct {
	Type     uint32 // archetype.ChecksumCRC32C
	Stored   uint64 // checksum in the footer
	Computed uint64 // checksum of the bytes read
	OK       bool   // every section, column and the footer checked out
}

// SectionInfo describes an entity section for tools: what [ReadInfo] reads of it besides the
// registry and the tables.
type SectionInfo struct {
	Refs   int // entries of the reference table
	Local  int // references to entities of the section
	Stable int // references by stable id
	Exact  int // references to entities as they are
}

// String summarises the references.
func (si *SectionInfo) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		name string
	}{{si.Local, "local"}, {si.Stable, "stable"}, {si.Exact, "exact"}} {
		if p.n > 0 {
			parts = append(parts, strconv.Itoa(p.n)+" "+p.name)
		}
	}
	return fmt.Sprintf("%d references (%s)", si.Refs, strings.Join(parts, ", "))
}

// Readers are the codec's readers of a file's description.
type Readers struct {
	// Info reads a whole file and describes it, checking every checksum on the way; on damage
	// it returns what it read so far with the error the codec's Decode would return.
	Info func(r io.Reader) (*Info, error)
	// Header parses the 64-byte header at the start of a file without reading the rest.
	Header func(b []byte) (Header, error)
	// Decrypt opens an encrypted file whole: see [Decrypt].
	Decrypt func(data, key []byte) ([]byte, error)
}

var readers Readers

// errNoCodec is returned when the codec is not linked in.
var errNoCodec = errors.New("pecs: no PECS reader: import github.com/arksave/arksave/archetype")

// Register sets the readers [ReadInfo] and [ReadHeader] use; the archetype package calls it
// once, at init.
func Register(r Readers) { readers = r }

// ReadInfo reads a whole PECS file from r and describes it, checking every section's, column's
// and the footer's checksum on the way. On damage it returns what it could read so far together
// with an error as archetype.Decode would return it (ErrCorrupt, ErrVersion).
func ReadInfo(r io.Reader) (*Info, error) {
	if readers.Info == nil {
		return &Info{}, errNoCodec
	}
	return readers.Info(r)
}

// ReadHeader parses the 64-byte header at the start of a PECS file (magic, version, checksum,
// values) without reading the rest: a cheap look at its counts, Entities among them. Input
// shorter than a header is an error wrapping archetype.ErrCorrupt and io.ErrUnexpectedEOF.
func ReadHeader(b []byte) (Header, error) {
	if readers.Header == nil {
		return Header{}, errNoCodec
	}
	return readers.Header(b)
}

// FlagEncrypted is the header flag of an encrypted file (archetype.Key): the header is
// plaintext, everything between it and the footer is AES-256-GCM ciphertext.
const FlagEncrypted uint32 = 0x0020

// Decrypt returns the plaintext file of data, a whole PECS file encrypted with key
// (archetype.Key), for the readers of this package and the codec's: data as it is when it is
// not encrypted. The errors are the codec's: archetype.ErrCorrupt for damage (checked first,
// through the footer's checksum), archetype.ErrWrongKey for a key that does not open it.
func Decrypt(data, key []byte) ([]byte, error) {
	if readers.Decrypt == nil {
		return nil, errNoCodec
	}
	return readers.Decrypt(data, key)
}
