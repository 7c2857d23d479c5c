// Package mpcheck checks msgpack data before a decoder trusts it: every
// length it holds must fit in the data, and nesting must stay bounded, so
// that decoding allocates no more than the input's length justifies and
// does not recurse without bound.
package mpcheck

import (
	"encoding/binary"
	"errors"
)

// ErrMalformed is the error of data that is not well-formed msgpack, or
// holds a length the data cannot back.
var ErrMalformed = errors.New("malformed msgpack")

// Size walks n msgpack values at the start of b without decoding them and returns the
// bytes they take. It checks that every length fits in b and that nesting stays within
// maxDepth, so that decoding the values afterwards neither recurses without bound nor
// trusts a length the input cannot back.
func Size(b []byte, n, maxDepth int) (int, error) {
	be := binary.BigEndian
	stack := []int{n} // values left to read at each level
	pos := 0
	need := func(k int64) bool { return k >= 0 && k <= int64(len(b)-pos) }
	for len(stack) > 0 {
		top := len(stack) - 1
		if stack[top] == 0 {
			stack = stack[:top]
			continue
		}
		stack[top]--
		if !need(1) {
			return 0, ErrMalformed
		}
		c := b[pos]
		pos++
		var skip, items int64 // 64 bits: a 32-bit length must not wrap on a 32-bit host
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c&0xf0 == 0x80:
			items = 2 * int64(c&0x0f)
		case c&0xf0 == 0x90:
			items = int64(c & 0x0f)
		case c&0xe0 == 0xa0:
			skip = int64(c & 0x1f)
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
				return 0, ErrMalformed
			}
			skip = 1 + int64(b[pos])
		case c == 0xc5 || c == 0xda || c == 0xc8: // bin16, str16, ext16
			if !need(2) {
				return 0, ErrMalformed
			}
			skip = 2 + int64(be.Uint16(b[pos:]))
		case c == 0xc6 || c == 0xdb || c == 0xc9: // bin32, str32, ext32
			if !need(4) {
				return 0, ErrMalformed
			}
			skip = 4 + int64(be.Uint32(b[pos:]))
		case c == 0xdc || c == 0xde: // array16, map16
			if !need(2) {
				return 0, ErrMalformed
			}
			items = int64(be.Uint16(b[pos:]))
			skip = 2
		case c == 0xdd || c == 0xdf: // array32, map32
			if !need(4) {
				return 0, ErrMalformed
			}
			items = int64(be.Uint32(b[pos:]))
			skip = 4
		default: // 0xc1, never used
			return 0, ErrMalformed
		}
		if c >= 0xc7 && c <= 0xc9 {
			skip++ // the extension's type byte
		}
		if c == 0xde || c == 0xdf {
			items *= 2
		}
		if !need(skip) {
			return 0, ErrMalformed
		}
		pos += int(skip)
		if items > 0 {
			if items > int64(len(b)-pos) || len(stack) > maxDepth {
				return 0, ErrMalformed
			}
			stack = append(stack, int(items))
		}
	}
	return pos, nil
}
