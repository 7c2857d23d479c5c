package mapserve

import (
	"bytes"
	"encoding/json"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
)

// The map's former way to a section's entities, kept as the peer the new
// reader is compared with and measured against: the whole section
// exported to JSON, parsed back into maps, each entity's object written
// again.

// sectionJSON is what the former path read of archetype.ExportSectionJSON.
type sectionJSON struct {
	Refs   json.RawMessage `json:"refs"`
	Tables []struct {
		Components []string                     `json:"components"`
		Entities   []map[string]json.RawMessage `json:"entities"`
	} `json:"tables"`
}

// eachEntityJSON is eachEntity through the JSON export.
func eachEntityJSON(sec []byte, fn func(names []string, raw json.RawMessage, e map[string]json.RawMessage, refs json.RawMessage)) error {
	var buf bytes.Buffer
	if err := archetype.ExportSectionJSON(&buf, sec); err != nil {
		return err
	}
	var sj sectionJSON
	if err := json.Unmarshal(buf.Bytes(), &sj); err != nil {
		return err
	}
	var keys [][]byte
	for _, t := range sj.Tables {
		keys = keys[:0]
		for _, name := range t.Components {
			k, _ := json.Marshal(name)
			keys = append(keys, k)
		}
		for _, e := range t.Entities {
			raw := append([]byte(`{"entity": `), orNullJSON(e["entity"])...)
			for i, name := range t.Components {
				raw = append(append(append(append(raw, ", "...), keys[i]...), ": "...), orNullJSON(e[name])...)
			}
			fn(t.Components, append(raw, '}'), e, sj.Refs)
		}
	}
	return nil
}

func orNullJSON(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

// regionalsOfJSON is regionalsOf through eachEntityJSON.
func regionalsOfJSON(pos chunkPos, size int, blk *chunkstore.EntityBlock, place func(Components) (float64, float64, bool)) ([]*regional, map[uint64]sectionEntity, error) {
	set := newRegionalSet(pos, size, blk)
	for _, sec := range blk.Sections {
		err := eachEntityJSON(sec, func(names []string, raw json.RawMessage, e map[string]json.RawMessage, refs json.RawMessage) {
			var reg components.Regional
			if r, ok := e[regionalName]; !ok || json.Unmarshal(r, &reg) != nil || set.body(reg.ID, raw, refs) {
				return
			}
			x, y, placed, by, ok := locateJSON(names, e, place)
			set.add(reg.ID, raw, refs, x, y, placed, by, ok)
		})
		if err != nil {
			return set.out, set.bodies, err
		}
	}
	return set.out, set.bodies, nil
}

// locateJSON is locate over an entity's map.
func locateJSON(names []string, e map[string]json.RawMessage, place func(Components) (float64, float64, bool)) (x, y float64, placed, by string, ok bool) {
	if place != nil {
		comps := make(Components, len(e))
		for k, v := range e {
			if k != "entity" {
				comps[k] = v
			}
		}
		if x, y, ok := place(comps); usable(x, y, ok) {
			return x, y, placedRegistered, "", true
		}
	}
	for _, name := range names {
		if name == regionalName {
			continue
		}
		fields := objectFieldsJSON(e[name])
		for _, f := range heuristicFields {
			if x, y, ok := fieldsXYJSON(fields, f[0], f[1]); usable(x, y, ok) {
				return x, y, placedFields, name, true
			}
		}
	}
	return 0, 0, "", "", false
}

// objectFieldsJSON is objectFields through encoding/json.
func objectFieldsJSON(value json.RawMessage) map[string]json.RawMessage {
	if len(value) == 0 || value[0] != '{' {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(value, &fields) != nil {
		return nil
	}
	return fields
}

// fieldsXYJSON is fieldsXY over a map.
func fieldsXYJSON(fields map[string]json.RawMessage, x, y string) (float64, float64, bool) {
	fx, okx := number(fields[x])
	fy, oky := number(fields[y])
	return fx, fy, okx && oky
}
