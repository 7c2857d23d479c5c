package archetype_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
)

var (
	testKey  = bytes.Repeat([]byte{0x5a}, 32)
	otherKey = bytes.Repeat([]byte{0xa5}, 32)
)

// secretWorld is smallWorld with a name no plaintext file could hide.
func secretWorld() *ecs.World {
	w := smallWorld()
	ecs.NewMap1[Name](w).NewEntity(&Name{"the-dragon-hoard-is-under-the-old-oak"})
	return w
}

// refixFooter recomputes the footer's checksum over the file as it now is, as someone who
// altered the file on purpose would.
func refixFooter(b []byte) {
	n := len(b) - 32
	binary.LittleEndian.PutUint64(b[n+4:], uint64(crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli))))
}

func TestKeyRoundTrip(t *testing.T) {
	w := secretWorld()
	data := encode(t, w, archetype.Key(testKey), archetype.LZ4())
	if bytes.Contains(data, []byte("dragon-hoard")) {
		t.Fatal("the encrypted file holds a component's string in plaintext")
	}
	if !bytes.Contains(encode(t, w), []byte("dragon-hoard")) {
		t.Fatal("the plaintext file does not hold the string: the check above proves nothing")
	}
	expectSameWorld(t, w, decode(t, data, archetype.Key(testKey)))

	// The header is plaintext: the flag, the version and the counts read without the key.
	h, err := pecs.ReadHeader(data)
	expectNoError(t, err, "ReadHeader")
	if h.Flags&pecs.FlagEncrypted == 0 || h.FileSize != uint64(len(data)) {
		t.Fatalf("header flags %#x, file size %d of %d", h.Flags, h.FileSize, len(data))
	}
	// AppendEncode writes the same kind of file after dst.
	app, err := archetype.AppendEncode([]byte("prefix"), w, archetype.Key(testKey))
	expectNoError(t, err, "AppendEncode")
	if !bytes.HasPrefix(app, []byte("prefix")) {
		t.Fatal("AppendEncode lost dst")
	}
	expectSameWorld(t, w, decode(t, app[len("prefix"):], archetype.Key(testKey)))
	// A plaintext file reads with a key too (a save from before the game set one).
	expectSameWorld(t, w, decode(t, encode(t, w), archetype.Key(testKey)))
}

func TestKeyRefusals(t *testing.T) {
	data := encode(t, secretWorld(), archetype.Key(testKey))
	tryDecode := func(data []byte, opts ...archetype.Option) error {
		w := ecs.NewWorld()
		registerAll(w)
		err := archetype.Decode(bytes.NewReader(data), w, opts...)
		if err != nil && w.Stats().Entities.Total != 0 {
			t.Errorf("a refused file left %d entities in the world", w.Stats().Entities.Total)
		}
		return err
	}
	err := tryDecode(data)
	if !errors.Is(err, archetype.ErrEncrypted) || errors.Is(err, archetype.ErrCorrupt) {
		t.Fatalf("no key: %v, want ErrEncrypted", err)
	}
	err = tryDecode(data, archetype.Key(otherKey))
	if !errors.Is(err, archetype.ErrWrongKey) || errors.Is(err, archetype.ErrCorrupt) {
		t.Fatalf("wrong key: %v, want ErrWrongKey and not ErrCorrupt", err)
	}
	// Damage inside the ciphertext is found by the footer's checksum first: ErrCorrupt.
	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 1
	if err := tryDecode(bad, archetype.Key(testKey)); !errors.Is(err, archetype.ErrCorrupt) {
		t.Fatalf("damaged ciphertext: %v, want ErrCorrupt", err)
	}
	// Without the key, damage is still damage.
	if err := tryDecode(bad); !errors.Is(err, archetype.ErrCorrupt) {
		t.Fatalf("damaged ciphertext without a key: %v, want ErrCorrupt", err)
	}
	// Altered with the checksum fixed up: GCM's tag refuses it.
	refixFooter(bad)
	if err := tryDecode(bad, archetype.Key(testKey)); !errors.Is(err, archetype.ErrWrongKey) {
		t.Fatalf("altered ciphertext with its checksum fixed: %v, want ErrWrongKey", err)
	}
	// The header is the associated data: a changed timestamp with fixed checksums is refused.
	hdr := bytes.Clone(data)
	hdr[32] ^= 1
	binary.LittleEndian.PutUint32(hdr[60:], crc32.Checksum(hdr[:60], crc32.MakeTable(crc32.Castagnoli)))
	refixFooter(hdr)
	if err := tryDecode(hdr, archetype.Key(testKey)); !errors.Is(err, archetype.ErrWrongKey) {
		t.Fatalf("altered header: %v, want ErrWrongKey", err)
	}
	// Truncated: ErrCorrupt.
	if err := tryDecode(data[:len(data)-40], archetype.Key(testKey)); !errors.Is(err, archetype.ErrCorrupt) {
		t.Fatalf("truncated: %v, want ErrCorrupt", err)
	}
}

func TestKeyLength(t *testing.T) {
	for _, key := range [][]byte{nil, make([]byte, 16), make([]byte, 33)} {
		_, err := archetype.AppendEncode(nil, smallWorld(), archetype.Key(key))
		if !errors.Is(err, archetype.ErrWrongKey) || !strings.Contains(err.Error(), "has "+strconv.Itoa(len(key))+" bytes") {
			t.Errorf("Encode with a key of %d bytes: %v", len(key), err)
		}
		w := ecs.NewWorld()
		if err := archetype.Decode(bytes.NewReader(encode(t, smallWorld())), w, archetype.Key(key)); !errors.Is(err, archetype.ErrWrongKey) {
			t.Errorf("Decode with a key of %d bytes: %v", len(key), err)
		}
	}
}

func TestKeyReaders(t *testing.T) {
	data := encode(t, secretWorld(), archetype.Key(testKey))
	info, err := pecs.ReadInfo(bytes.NewReader(data))
	if !errors.Is(err, archetype.ErrEncrypted) || info.Header.Flags&pecs.FlagEncrypted == 0 {
		t.Fatalf("ReadInfo: flags %#x, %v; want the flag and ErrEncrypted", info.Header.Flags, err)
	}
	if err := archetype.ExportJSON(io.Discard, bytes.NewReader(data)); !errors.Is(err, archetype.ErrEncrypted) {
		t.Fatalf("ExportJSON: %v, want ErrEncrypted", err)
	}
	plain, err := pecs.Decrypt(data, testKey)
	expectNoError(t, err, "Decrypt")
	info, err = pecs.ReadInfo(bytes.NewReader(plain))
	expectNoError(t, err, "ReadInfo of the decrypted file")
	if info.Header.Entities != 4 {
		t.Fatalf("decrypted file: %d entities", info.Header.Entities)
	}
	var js bytes.Buffer
	expectNoError(t, archetype.ExportJSON(&js, bytes.NewReader(plain)), "ExportJSON")
	if !strings.Contains(js.String(), "dragon-hoard") {
		t.Fatal("the export of the decrypted file lacks the string")
	}
	if _, err := pecs.Decrypt(data, otherKey); !errors.Is(err, archetype.ErrWrongKey) {
		t.Fatalf("Decrypt with the wrong key: %v", err)
	}
	if _, err := pecs.Decrypt(data, nil); !errors.Is(err, archetype.ErrEncrypted) {
		t.Fatalf("Decrypt without a key: %v", err)
	}
}

func TestKeySections(t *testing.T) {
	src := secretWorld()
	var all []ecs.Entity
	q := ecs.NewFilter1[Name](src).Query()
	for q.Next() {
		all = append(all, q.Entity())
	}
	sec, err := archetype.AppendEntities(nil, src, all, archetype.Key(testKey))
	expectNoError(t, err, "AppendEntities")
	if bytes.Contains(sec, []byte("dragon-hoard")) {
		t.Fatal("the encrypted section holds the string in plaintext")
	}
	w := ecs.NewWorld()
	registerAll(w)
	if _, err := archetype.DecodeEntities(sec, w); !errors.Is(err, archetype.ErrEncrypted) {
		t.Fatalf("DecodeEntities without a key: %v", err)
	}
	if _, err := archetype.DecodeEntities(sec, w, archetype.Key(otherKey)); !errors.Is(err, archetype.ErrWrongKey) {
		t.Fatalf("DecodeEntities with the wrong key: %v", err)
	}
	created, err := archetype.DecodeEntities(sec, w, archetype.Key(testKey))
	expectNoError(t, err, "DecodeEntities")
	if len(created) != len(all) || ecs.NewMap1[Name](w).Get(created[len(created)-1]).S != "the-dragon-hoard-is-under-the-old-oak" {
		t.Fatalf("created %d of %d", len(created), len(all))
	}
}

// TestSeedFlags: the flag values seed 002 gave other meanings (0x8 big-endian, 0x10 streaming,
// and any bit this reader does not know) are ErrVersion, not misread.
func TestSeedFlags(t *testing.T) {
	data := encode(t, smallWorld())
	for _, flag := range []uint32{0x8, 0x10, 0x40, 0x8000} {
		b := bytes.Clone(data)
		binary.LittleEndian.PutUint32(b[8:], binary.LittleEndian.Uint32(b[8:])|flag)
		binary.LittleEndian.PutUint32(b[60:], crc32.Checksum(b[:60], crc32.MakeTable(crc32.Castagnoli)))
		w := ecs.NewWorld()
		registerAll(w)
		if err := archetype.Decode(bytes.NewReader(b), w); !errors.Is(err, archetype.ErrVersion) {
			t.Errorf("flag %#x: %v, want ErrVersion", flag, err)
		}
	}
}

// FuzzDecodeKeyed feeds arbitrary bytes to Decode, DecodeEntities and pecs.Decrypt with a key
// set. Seeds: encrypted world files and sections, and crashers under testdata/fuzz/FuzzDecodeKeyed.
// Errors match a sentinel; nothing panics.
func FuzzDecodeKeyed(f *testing.F) {
	f.Add(encode(f, smallWorld(), archetype.Key(testKey)))
	f.Add(encode(f, richWorld(), archetype.Key(testKey), archetype.LZ4(), archetype.CompactPool()))
	f.Add(encode(f, smallWorld()))
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.pecs"))
	for _, p := range paths[:min(len(paths), 4)] {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := fuzzWorld()
		if err := archetype.Decode(bytes.NewReader(data), w, archetype.Key(testKey)); err != nil && !isSentinel(err) &&
			!strings.Contains(err.Error(), "not a world file") {
			t.Fatalf("Decode: error matches no sentinel: %v", err)
		}
		if _, err := archetype.DecodeEntities(data, fuzzWorld(), archetype.Key(testKey)); err != nil && !isSentinel(err) &&
			!strings.Contains(err.Error(), "not an entity section") {
			t.Fatalf("DecodeEntities: error matches no sentinel: %v", err)
		}
		if _, err := pecs.Decrypt(data, testKey); err != nil && !isSentinel(err) {
			t.Fatalf("Decrypt: error matches no sentinel: %v", err)
		}
	})
}
