package archetype

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/mlange-42/ark/ecs"
	"github.com/vmihailenco/msgpack/v5"
)

// Values that are not raw memory are msgpack values. Format 2.0 writes them with the package's
// own codec (value.go); this file keeps what format 1.0 files need, which were written by
// msgpack's reflection (structs as maps of their exported fields, map keys sorted) and are read
// the same way, and what reads values without their Go type (migrations, JSON export):
// ecs.Entity as the extension type [EntityExtID], loose decoding, and msgpackSize.
//
// The package's msgpack decoders use their own struct tag name (structTag, a fallback after
// "msgpack" tags), as its 1.0 encoders did.

// EntityExtID is the msgpack extension type with which ecs.Entity values inside
// msgpack-encoded components and resources are written: 8 bytes, id u32 and generation u32,
// little-endian. The package registers it with msgpack at start-up (msgpack's registry is
// global), so that entities survive in every position, including map values where Ark's own
// BinaryMarshaler cannot be reached, and come back as ecs.Entity values when read without the
// Go type.
const EntityExtID int8 = 69 // 'E'

// structTag is the fallback struct tag of the package's msgpack encoders and decoders.
const structTag = "pecs"

func init() {
	msgpack.RegisterExtEncoder(EntityExtID, ecs.Entity{}, func(_ *msgpack.Encoder, v reflect.Value) ([]byte, error) {
		s := slotOf(v.Interface().(ecs.Entity))
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, s.id)
		binary.LittleEndian.PutUint32(b[4:], s.gen)
		return b, nil
	})
	msgpack.RegisterExtDecoder(EntityExtID, ecs.Entity{}, func(d *msgpack.Decoder, v reflect.Value, n int) error {
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

var errMsgpack = errors.New("malformed msgpack")

// msgpackSize walks n msgpack values at the start of b without decoding them and returns the
// bytes they take. It checks that every length fits in b and that nesting stays within
// maxMsgpackDepth, so that decoding the values afterwards neither recurses without bound nor
// trusts a length the input cannot back.
func msgpackSize(b []byte, n int) (int, error) {
	be := binary.BigEndian
	stack := []int{n} // values left to read at each level
	pos := 0
	need := func(k int) bool { return k >= 0 && k <= len(b)-pos }
	for len(stack) > 0 {
		top := len(stack) - 1
		if stack[top] == 0 {
			stack = stack[:top]
			continue
		}
		stack[top]--
		if !need(1) {
			return 0, errMsgpack
		}
		c := b[pos]
		pos++
		skip, items := 0, 0
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c&0xf0 == 0x80:
			items = 2 * int(c&0x0f)
		case c&0xf0 == 0x90:
			items = int(c & 0x0f)
		case c&0xe0 == 0xa0:
			skip = int(c & 0x1f)
		case c == 0xca, c == 0xce, c == 0xd2:
			skip = 4
		case c == 0xcb, c == 0xcf, c == 0xd3:
			skip = 8
		case c == 0xcc, c == 0xd0:
			skip = 1
		case c == 0xcd, c == 0xd1:
			skip = 2
		case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16 and its type byte
			skip = 1 + 1<<(c-0xd4)
		case c == 0xc4 || c == 0xd9 || c == 0xc7: // bin8, str8, ext8
			if !need(1) {
				return 0, errMsgpack
			}
			skip = 1 + int(b[pos])
		case c == 0xc5 || c == 0xda || c == 0xc8: // bin16, str16, ext16
			if !need(2) {
				return 0, errMsgpack
			}
			skip = 2 + int(be.Uint16(b[pos:]))
		case c == 0xc6 || c == 0xdb || c == 0xc9: // bin32, str32, ext32
			if !need(4) {
				return 0, errMsgpack
			}
			skip = 4 + int(be.Uint32(b[pos:]))
		case c == 0xdc || c == 0xde: // array16, map16
			if !need(2) {
				return 0, errMsgpack
			}
			items = int(be.Uint16(b[pos:]))
			skip = 2
		case c == 0xdd || c == 0xdf: // array32, map32
			if !need(4) {
				return 0, errMsgpack
			}
			items = int(be.Uint32(b[pos:]))
			skip = 4
		default: // 0xc1, never used
			return 0, errMsgpack
		}
		if c >= 0xc7 && c <= 0xc9 {
			skip++ // the extension's type byte
		}
		if c == 0xde || c == 0xdf {
			items *= 2
		}
		if !need(skip) {
			return 0, errMsgpack
		}
		pos += skip
		if items > 0 {
			if items > len(b)-pos || len(stack) > maxMsgpackDepth {
				return 0, errMsgpack
			}
			stack = append(stack, items)
		}
	}
	return pos, nil
}
