package cli

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
)

// Types of a world whose values sit behind an interface.
type (
	Shape   interface{ Area() float64 }
	Square  struct{ Side float64 }
	Drawing struct{ Shape Shape }
)

func (s Square) Area() float64 { return s.Side * s.Side }

func init() { archetype.Register[Square]() }

// check reads every value of a world file against the types the file records: a value behind an
// interface that names a type the file does not describe fails the check, with the field, although
// every checksum is right; the intact file passes.
func TestCheckReadsEveryValue(t *testing.T) {
	w := ecs.NewWorld()
	ecs.NewMap1[Drawing](w).NewEntity(&Drawing{Shape: Square{Side: 2}})
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, w); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pecs")
	if err := os.WriteFile(good, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := arksave("check", good)
	expectCode(t, 0, code, errOut)
	expectContains(t, out, "no problems found")

	// The only column starts after the pool and ends with its CRC, before the resources.
	data := bytes.Clone(buf.Bytes())
	le := binary.LittleEndian
	info, err := pecs.ReadInfo(bytes.NewReader(data))
	if err != nil || len(info.Tables) != 1 {
		t.Fatalf("ReadInfo: %v", err)
	}
	start, end := int(info.Tables[0].DataOffset), int(info.Tables[0].DataOffset+info.Tables[0].DataSize)
	at := bytes.Index(data[start:end], []byte("cli.Square"))
	copy(data[start+at:], "cli.Sqxxxx")
	tab := crc32.MakeTable(crc32.Castagnoli)
	le.PutUint32(data[end-4:], crc32.Checksum(data[start:end-4], tab))
	le.PutUint64(data[len(data)-28:], uint64(crc32.Checksum(data[:len(data)-32], tab)))
	bad := filepath.Join(dir, "bad.pecs")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = arksave("check", bad)
	expectCode(t, 1, code, errOut)
	expectContains(t, out, "Drawing.Shape", "cli.Sqxxxx", "does not match the type the file records", "1 problem found")
}
