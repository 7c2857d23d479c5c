package archetype

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestMsgpackSize(t *testing.T) {
	long := strings.Repeat("x", 70000)
	values := []any{
		nil, true, false, 0, 127, -1, -33, 200, 70000, int64(1 << 40), int64(-1 << 40), float32(1.5), 2.5,
		"", "short", strings.Repeat("y", 40), strings.Repeat("z", 300), long,
		[]byte{}, []byte("bin"), bytes.Repeat([]byte{1}, 300), bytes.Repeat([]byte{2}, 70000),
		[]int{1, 2, 3}, make([]int, 20), make([]int, 70000),
		map[string]int{"a": 1}, map[int]string{1: "a", 2: "b"}, make(map[string]int),
		map[string]any{"nested": []any{map[string]any{"deep": []int{1}}}},
		time.Unix(1_700_000_000, 5), entityOf(slot{3, 4}),
		struct {
			A int
			B []string
			C map[string][]byte
		}{1, []string{"x"}, map[string][]byte{"k": {1}}},
	}
	bigMap := map[int]int{}
	for i := range 20 {
		bigMap[i] = i
	}
	values = append(values, bigMap)
	var all bytes.Buffer
	for _, v := range values {
		var buf bytes.Buffer
		if err := newMsgpackEncoder(&buf).Encode(v); err != nil {
			t.Fatal(err)
		}
		if n, err := msgpackSize(buf.Bytes(), 1); err != nil || n != buf.Len() {
			t.Errorf("%T: size %d, %v; encoded %d bytes", v, n, err, buf.Len())
		}
		for cut := range min(buf.Len(), 64) {
			if _, err := msgpackSize(buf.Bytes()[:cut], 1); err == nil {
				t.Errorf("%T truncated to %d bytes: accepted", v, cut)
			}
		}
		all.Write(buf.Bytes())
	}
	if n, err := msgpackSize(all.Bytes(), len(values)); err != nil || n != all.Len() {
		t.Errorf("all values: size %d, %v; encoded %d bytes", n, err, all.Len())
	}
}

func TestMsgpackSizeRefusesDeepNesting(t *testing.T) {
	deep := bytes.Repeat([]byte{0x91}, maxMsgpackDepth+2) // arrays of one array of one ...
	deep = append(deep, 0x00)
	if _, err := msgpackSize(deep, 1); err == nil {
		t.Error("deep nesting accepted")
	}
	ok := append(bytes.Repeat([]byte{0x91}, 100), 0x00)
	if n, err := msgpackSize(ok, 1); err != nil || n != len(ok) {
		t.Errorf("100 levels: %d, %v", n, err)
	}
	if _, err := msgpackSize([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, 1); err == nil {
		t.Error("array of 4G values in 5 bytes accepted")
	}
	if _, err := msgpackSize([]byte{0xc1}, 1); err == nil {
		t.Error("unused code 0xc1 accepted")
	}
}
