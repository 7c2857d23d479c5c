// Package sectionjson is where the archetype codec hands the tools of this module a reader of
// entity sections in the JSON export's view, entity by entity, without the Go types and
// without writing the whole document: the web map reads every chunk's regional entities and
// every player's record through it.
package sectionjson

import "errors"

// Entity is one entity of an entity section, as archetype.ExportSectionJSON shows it.
type Entity struct {
	// Index is the entity's index in the section, table after table ("entity" of the export).
	Index uint64
	// Names are the full type names of its table's components, in the table's order, as
	// the export lists a table's "components". Shared by the entities of one table.
	Names []string
	// Values are the JSON of its components, one per name, byte for byte as the export
	// writes them ("null" for zero-sized and transient components), each with no room
	// beyond its end, so that appending to one never writes over another.
	Values [][]byte
}

// Section is what a reader yields of one entity section.
type Section struct {
	// Refs is the section's reference table in JSON, byte for byte as the export's "refs".
	Refs []byte
	// Entities are its entities, in the section's order.
	Entities []Entity
}

// reader is the archetype codec's reader, set by it when it is linked in.
var reader func(data []byte) (*Section, error)

// errNoReader is returned by Read when the codec is not linked in.
var errNoReader = errors.New("sectionjson: no section reader: import github.com/arksave/arksave/archetype")

// Register sets the reader Read uses; the archetype package calls it once, at init.
func Register(read func(data []byte) (*Section, error)) { reader = read }

// Read reads the entity section data (archetype.AppendEntities' output) whole, checksums and
// footer included, and returns its entities. It fails as archetype.ExportSectionJSON does on
// the same bytes, and yields nothing then.
func Read(data []byte) (*Section, error) {
	if reader == nil {
		return nil, errNoReader
	}
	return reader(data)
}
