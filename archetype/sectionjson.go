package archetype

import (
	"fmt"

	"github.com/arksave/arksave/internal/sectionjson"
)

func init() { sectionjson.Register(readSectionJSON) }

// readSectionJSON reads an entity section as [ExportSectionJSON] shows it, entity by entity,
// without writing the document: each component's JSON is the export's, from the same column
// reader. It reads the section whole (footer and checksums) before it returns anything, and
// fails with the error ExportSectionJSON gives on the same bytes.
func readSectionJSON(data []byte) (*sectionjson.Section, error) {
	f, err := exportSectionHead(data)
	if err != nil {
		return nil, err
	}
	x := exporter{f: f, conc: newFileConcretes(f.types)}
	sec := &sectionjson.Section{Entities: make([]sectionjson.Entity, 0, f.header.Entities)}
	for i := range f.tables {
		if sec.Entities, err = x.sectionTable(i, sec.Entities); err != nil {
			return nil, err
		}
	}
	res, err := f.readResources()
	if err != nil {
		return nil, err
	}
	if len(res) != 0 {
		return nil, fmt.Errorf("%w: resources: a section holds %d resources", ErrCorrupt, len(res))
	}
	if err := f.readFooter(); err != nil {
		return nil, err
	}
	b := []byte{'['}
	for i, r := range f.refs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRefJSON(b, r)
	}
	sec.Refs = append(b, ']')
	return sec, nil
}

// sectionTable appends the entities of table i to out.
func (x *exporter) sectionTable(i int, out []sectionjson.Entity) ([]sectionjson.Entity, error) {
	f := x.f
	e := &f.tables[i]
	cols, err := x.tableColumns(i)
	if err != nil {
		return out, err
	}
	null := []byte("null") // the JSON of a component without data
	names := make([]string, len(e.comps))
	for j, c := range e.comps {
		names[j] = f.types[c].name
	}
	values := make([][]byte, int(e.count)*len(e.comps))
	for row := range int(e.count) {
		vs := values[row*len(e.comps) : (row+1)*len(e.comps) : (row+1)*len(e.comps)]
		k := 0
		for j, c := range e.comps {
			if !f.types[c].hasData() {
				vs[j] = null
				continue
			}
			vs[j] = cols[k].row(row)
			k++
		}
		out = append(out, sectionjson.Entity{Index: e.first + uint64(row), Names: names, Values: vs})
	}
	return out, nil
}
