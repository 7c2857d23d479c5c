package archetype

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/mlange-42/ark/ecs"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/arksave/arksave/internal/mpcheck"
)

// Values that are not raw memory are msgpack values. Format 2.0 writes them with the package's
// own codec (value.go); this file keeps what format 1.0 files need, which were written by
// msgpack's reflection (structs as maps of their exported fields, map keys sorted) and are read
// the same way, and what reads values without their Go type (migrations, JSON export):
// ecs.Entity as the extension type entityExtID, loose decoding, and msgpackSize.
//
// The package's msgpack decoders use their own struct tag name (structTag, a fallback after
// "msgpack" tags), as its 1.0 encoders did.

// entityExtID is the msgpack extension type with which ecs.Entity values inside
// msgpack-encoded components and resources are written: 8 bytes, id u32 and generation u32,
// little-endian. The package registers it with msgpack at start-up (msgpack's registry is
// global), so that entities survive in every position, including map values where Ark's own
// BinaryMarshaler cannot be reached, and come back as ecs.Entity values when read without the
// Go type.
const entityExtID int8 = 69 // 'E'

// structTag is the fallback struct tag of the package's msgpack encoders and decoders.
const structTag = "pecs"

func init() {
	msgpack.RegisterExtEncoder(entityExtID, ecs.Entity{}, func(_ *msgpack.Encoder, v reflect.Value) ([]byte, error) {
		s := slotOf(v.Interface().(ecs.Entity))
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, s.id)
		binary.LittleEndian.PutUint32(b[4:], s.gen)
		return b, nil
	})
	msgpack.RegisterExtDecoder(entityExtID, ecs.Entity{}, func(d *msgpack.Decoder, v reflect.Value, n int) error {
		if n != 8 {
			return errEntityExt
		}
		var b [8]byte
		if err := d.ReadFull(b[:]); err != nil {
			return err
		}
		v.Set(reflect.ValueOf(entityOf(slot{id: binary.LittleEndian.Uint32(b[:]), gen: binary.LittleEndian.Uint32(b[4:])})))
		return nil
	})
}

// newMsgpackEncoder returns an encoder that follows the package's conventions.
func newMsgpackEncoder(buf *bytes.Buffer) *msgpack.Encoder {
	enc := msgpack.NewEncoder(buf)
	enc.SetSortMapKeys(true)
	enc.SetCustomStructTag(structTag)
	return enc
}

// newMsgpackDecoder returns a decoder that follows the package's conventions. A loose decoder
// reads values without the Go type: see [looseValue].
func newMsgpackDecoder(loose bool) *msgpack.Decoder {
	dec := msgpack.NewDecoder(nil)
	dec.SetCustomStructTag(structTag)
	dec.UseLooseInterfaceDecoding(loose)
	return dec
}

// resetDecoder points dec at r. Loose decoders read every map as map[string]any.
func resetDecoder(dec *msgpack.Decoder, r *bytes.Reader, loose bool) {
	dec.ResetReader(r) // also forgets the map decoder
	if loose {
		dec.SetMapDecoder(decodeLooseMap)
	}
}

// looseValue reads one value without its Go type: structs and maps become map[string]any (keys
// that are not strings formatted with fmt.Sprint), arrays and slices []any, signed integers
// int64, unsigned integers uint64, floats float64, strings and byte slices string, entities
// ecs.Entity.
func looseValue(dec *msgpack.Decoder) (any, error) { return dec.DecodeInterfaceLoose() }

func decodeLooseMap(d *msgpack.Decoder) (any, error) {
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err
	}
	m := make(map[string]any, min(n, 1024))
	for range n {
		k, err := d.DecodeInterfaceLoose()
		if err != nil {
			return nil, err
		}
		v, err := d.DecodeInterfaceLoose()
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			ks = fmt.Sprint(k)
		}
		m[ks] = v
	}
	return m, nil
}

// maxMsgpackDepth bounds the nesting of stored msgpack values: decoding recurses once per level,
// and a hostile file could otherwise nest deep enough to exhaust the stack.
const maxMsgpackDepth = 4096

// msgpackSize walks n msgpack values at the start of b without decoding them and returns the
// bytes they take (see mpcheck.Size): no length the input cannot back, nesting within
// maxMsgpackDepth.
func msgpackSize(b []byte, n int) (int, error) { return mpcheck.Size(b, n, maxMsgpackDepth) }
