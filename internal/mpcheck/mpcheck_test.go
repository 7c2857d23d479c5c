package mpcheck_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/arksave/arksave/internal/mpcheck"
)

// Every kind of msgpack value, in every width msgpack has for it, takes
// exactly the bytes it was encoded to; every truncation of it is malformed.
func TestSizeOfEveryKind(t *testing.T) {
	values := []any{
		nil, true, false, 0, 1, -1, 127, -32, 128, -33, 300, -300, 70000, -70000, int64(1 << 40), int64(-(1 << 40)),
		uint8(200), uint16(60000), uint32(4000000000), uint64(1 << 63),
		float32(1.5), 2.25,
		"", "short", strings.Repeat("s", 40), strings.Repeat("m", 300), strings.Repeat("l", 70000),
		[]byte{}, []byte("bin"), make([]byte, 300), make([]byte, 70000),
		[]int{1, 2, 3}, make([]int, 20), make([]int, 70000),
		map[string]int{"a": 1}, bigMap(20), bigMap(70000),
		time.Unix(1, 0).UTC(), time.Unix(1<<40, 5).UTC(), // fixext 4/8 and ext8
		[]any{map[string]any{"x": []any{1, "two", 3.0}}, nil},
	}
	for _, v := range values {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		n, err := mpcheck.Size(b, 1, 16)
		if err != nil || n != len(b) {
			t.Errorf("%T (%x...): size %d, %v; want %d", v, b[:min(len(b), 4)], n, err, len(b))
		}
		for _, cut := range cuts(len(b)) {
			if _, err := mpcheck.Size(b[:cut], 1, 16); !errors.Is(err, mpcheck.ErrMalformed) {
				t.Fatalf("%T cut to %d of %d bytes: %v", v, cut, len(b), err)
			}
		}
	}
}

// cuts are the lengths a value of n bytes is cut to: every one for a short
// value, the first and last hundred for a long one.
func cuts(n int) []int {
	var c []int
	for i := range n {
		if i < 100 || i >= n-100 {
			c = append(c, i)
		}
	}
	return c
}

func bigMap(n int) map[int]bool {
	m := make(map[int]bool, n)
	for i := range n {
		m[i] = true
	}
	return m
}

// Several values in a row, the unused code, fixext 16, ext16/32, and
// nesting past the bound.
func TestSizeEdges(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		n    int
		want int // -1: malformed
	}{
		{"two values", []byte{0x01, 0xa1, 'x', 0xff}, 2, 3},
		{"never used", []byte{0xc1}, 1, -1},
		{"fixext16", append([]byte{0xd8, 0x01}, make([]byte, 16)...), 1, 18},
		{"ext16", append([]byte{0xc8, 0x00, 0x03, 0x07}, 1, 2, 3), 1, 7},
		{"ext32", append([]byte{0xc9, 0, 0, 0, 0x02, 0x07}, 1, 2), 1, 8},
		{"str32 past the end", []byte{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}, 1, -1},
		{"array32 longer than the input", []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0x01}, 1, -1},
		{"map16 of one", []byte{0xde, 0x00, 0x01, 0x01, 0x02}, 1, 5},
		{"nesting within", []byte{0x91, 0x91, 0x91, 0x01}, 1, 4},
		{"nesting past", []byte{0x91, 0x91, 0x91, 0x91, 0x01}, 1, -1},
	}
	for _, c := range cases {
		n, err := mpcheck.Size(c.b, c.n, 3)
		switch {
		case c.want < 0 && !errors.Is(err, mpcheck.ErrMalformed):
			t.Errorf("%s: %d, %v; want ErrMalformed", c.name, n, err)
		case c.want >= 0 && (err != nil || n != c.want):
			t.Errorf("%s: %d, %v; want %d", c.name, n, err, c.want)
		}
	}
}
