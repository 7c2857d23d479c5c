package arksave

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fuzzBiome is a game's value kept with a chunk.
type fuzzBiome struct {
	Name    string
	Heights []int16
	Tags    map[string]uint8
}

// FuzzChunkValue decodes arbitrary chunk data as a value SetChunkValue
// stored: an error or a value, never a panic; what decodes encodes back to
// the same value.
func FuzzChunkValue(f *testing.F) {
	for _, v := range []fuzzBiome{{}, {Name: "swamp", Heights: []int16{3, -2}, Tags: map[string]uint8{"wet": 1}}} {
		b, err := msgpack.Marshal(chunkValue[fuzzBiome]{Type: typeName[fuzzBiome](), Value: v})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x82, 0xa1, 't', 0xa1, 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeChunkValue[fuzzBiome](data)
		if err != nil {
			return
		}
		b, err := msgpack.Marshal(chunkValue[fuzzBiome]{Type: typeName[fuzzBiome](), Value: v})
		if err != nil {
			t.Fatalf("a decoded value does not encode: %v", err)
		}
		again, err := decodeChunkValue[fuzzBiome](b)
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("round trip: %+v, then %+v (%v)", v, again, err)
		}
	})
}
