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
	stack := []int{n} // values left to read at each level
	pos := 0
	for len(stack) > 0 {
		top := len(stack) - 1
		if stack[top] == 0 {
			stack = stack[:top]
			continue
		}
		stack[top]--
		if pos >= len(b) {
			return 0, ErrMalformed
		}
		c := b[pos]
		pos++
		// 64 bits: a 32-bit length must not wrap on a 32-bit host
		skip, items, ok := lengths(c, b[pos:])
		if !ok || skip > int64(len(b)-pos) {
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

// lengths reads the value that starts with code c, followed by rest: the bytes it takes after
// its code (skip) and the values nested in it (items). ok is false for a code msgpack never
// uses and for a length that rest does not hold.
func lengths(c byte, rest []byte) (skip, items int64, ok bool) {
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return 0, 0, true // fixint, nil, false, true
	case c&0xf0 == 0x80: // fixmap
		return 0, 2 * int64(c&0x0f), true
	case c&0xf0 == 0x90: // fixarray
		return 0, int64(c & 0x0f), true
	case c&0xe0 == 0xa0: // fixstr
		return int64(c & 0x1f), 0, true
	case c >= 0xc4 && c <= 0xc9, c >= 0xd9 && c <= 0xdb: // bin, ext, str with a length
		return lengthPrefixed(c, rest)
	case c >= 0xdc: // array16, array32, map16, map32
		return containerLengths(c, rest)
	}
	skip = scalarSize(c)
	return skip, 0, skip > 0
}

// lengthPrefixed reads the length of a bin8/16/32, str8/16/32 or ext8/16/32 value.
func lengthPrefixed(c byte, rest []byte) (skip, items int64, ok bool) {
	var width int64
	switch c {
	case 0xc4, 0xd9, 0xc7: // bin8, str8, ext8
		width = 1
	case 0xc5, 0xda, 0xc8: // bin16, str16, ext16
		width = 2
	default: // bin32, str32, ext32
		width = 4
	}
	n, ok := uintAt(rest, width)
	if !ok {
		return 0, 0, false
	}
	skip = width + n
	if c >= 0xc7 && c <= 0xc9 {
		skip++ // the extension's type byte
	}
	return skip, 0, true
}

// containerLengths reads the count of an array16/32 or map16/32: a map holds a key and a value
// per entry.
func containerLengths(c byte, rest []byte) (skip, items int64, ok bool) {
	width := int64(2)
	if c == 0xdd || c == 0xdf {
		width = 4
	}
	n, ok := uintAt(rest, width)
	if !ok {
		return 0, 0, false
	}
	if c == 0xde || c == 0xdf {
		n *= 2
	}
	return width, n, true
}

// uintAt reads a big-endian length of width 1, 2 or 4 bytes at the start of b.
func uintAt(b []byte, width int64) (int64, bool) {
	if int64(len(b)) < width {
		return 0, false
	}
	switch width {
	case 1:
		return int64(b[0]), true
	case 2:
		return int64(binary.BigEndian.Uint16(b)), true
	}
	return int64(binary.BigEndian.Uint32(b)), true
}

// scalarSize returns the bytes after the code of a number or fixext, 0 for 0xc1 (never used).
func scalarSize(c byte) int64 {
	switch {
	case c == 0xca, c == 0xce, c == 0xd2:
		return 4
	case c == 0xcb, c == 0xcf, c == 0xd3:
		return 8
	case c == 0xcc, c == 0xd0:
		return 1
	case c == 0xcd, c == 0xd1:
		return 2
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16 and its type byte
		return 1 + 1<<(c-0xd4)
	}
	return 0
}
