package chunkstore_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

var (
	storeKey   = bytes.Repeat([]byte{0x5a}, 32)
	otherKey   = bytes.Repeat([]byte{0xa5}, 32)
	secretText = []byte("the-crown-lies-under-the-old-oak")
)

// secretWorld is a store's worth of distinctive content: a chunk of
// random pixels (Full), one painted with a few materials (Palette), one a
// few pixels off its generated base (Delta), the same uniform chunk at two
// positions (the dictionary would share it), extra data and an entity
// block whose section and body extension hold secretText.
type secretWorld struct {
	full, palette, delta, uniform []uint32
	block                         chunkstore.EntityBlock
}

func newSecretWorld() secretWorld {
	rng := rand.New(rand.NewPCG(26, 11))
	w := secretWorld{full: randomChunk(small, rng), delta: generated(chunkstore.Pos{X: 2}, small), uniform: uniformChunk(small, 0x0b0b0b0b)}
	for i := range 3 {
		w.delta[i*37] = 0xde1da000 + uint32(i)
	}
	w.palette = make([]uint32, npix)
	for i := range w.palette {
		w.palette[i] = []uint32{0x11aa22bb, 0x33cc44dd, 0x55ee66ff}[i*7%11%3]
	}
	b := body(0xfeed, 3, 2, rng)
	b.Extension = secretText
	w.block = chunkstore.EntityBlock{Bodies: []chunkstore.Body{b}, Sections: [][]byte{append([]byte("section:"), secretText...)}}
	return w
}

func (w secretWorld) commit(t *testing.T, s *chunkstore.Store) {
	t.Helper()
	b := s.NewBatch()
	b.PutChunkExtra(chunkstore.Pos{X: 0}, w.full, secretText)
	b.PutChunk(chunkstore.Pos{X: 1}, w.palette)
	b.PutChunk(chunkstore.Pos{X: 2}, w.delta)
	b.PutChunk(chunkstore.Pos{X: 3}, w.uniform)
	b.PutChunk(chunkstore.Pos{X: 4}, w.uniform)
	b.PutEntities(chunkstore.Pos{X: 5}, w.block)
	_, err := s.Commit(b)
	must(t, err)
}

// expectSame reads every chunk and the entity block back from s.
func (w secretWorld) expectSame(t *testing.T, s *chunkstore.Store) {
	t.Helper()
	dst := make([]uint32, npix)
	for x, want := range [][]uint32{w.full, w.palette, w.delta, w.uniform, w.uniform} {
		stored, extra, err := s.GetExtra(chunkstore.Pos{X: int32(x)}, dst)
		must(t, err)
		expect(t, stored && slices.Equal(dst, want), "chunk %d does not read back", x)
		expect(t, x != 0 || bytes.Equal(extra, secretText), "chunk 0's extra data: %q", extra)
	}
	blk, err := s.Entities(chunkstore.Pos{X: 5})
	must(t, err)
	expect(t, len(blk.Sections) == 1 && bytes.Equal(blk.Sections[0], w.block.Sections[0]), "sections: %q", blk.Sections)
	expect(t, diffBodies(blk.Bodies, w.block.Bodies, ^uint32(0)) == "", "bodies: %s", diffBodies(blk.Bodies, w.block.Bodies, ^uint32(0)))
}

// secretStore creates a store on a new disk, with storeKey when keyed,
// and commits the secret world into it.
func secretStore(t *testing.T, keyed bool) (*vfs.Mem, chunkstore.Options, *chunkstore.Store) {
	t.Helper()
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	if keyed {
		cfg.Key = storeKey
	}
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	newSecretWorld().commit(t, s)
	return mem, cfg, s
}

// entriesByX lists the entries of s by the x of their chunk.
func entriesByX(s *chunkstore.Store) map[int32][]storetool.Entry {
	out := map[int32][]storetool.Entry{}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		out[e.Pos.X] = append(out[e.Pos.X], e)
		return true
	})
	return out
}

// storeBytes returns every byte of every file of the store at storePath.
func storeBytes(t *testing.T, mem *vfs.Mem) []byte {
	t.Helper()
	var all []byte
	for _, b := range storeFiles(t, mem) {
		all = append(all, b...)
	}
	return all
}

// plaintexts are the byte strings of the secret world whose presence in a
// store's files shows its content: the text, a run of the random chunk's
// pixels, the palette's colours, the delta's changed pixels.
func (w secretWorld) plaintexts() map[string][]byte {
	run := make([]byte, 32)
	for i := range 8 {
		binary.LittleEndian.PutUint32(run[4*i:], w.full[40+i])
	}
	pal := binary.LittleEndian.AppendUint32(nil, 0x33cc44dd)
	var changed []byte
	base := generated(chunkstore.Pos{X: 2}, small)
	for i := range w.delta {
		if w.delta[i] != base[i] {
			changed = binary.LittleEndian.AppendUint32(changed, w.delta[i])
			break
		}
	}
	return map[string][]byte{"text": secretText, "full chunk": run, "palette": pal, "delta": changed}
}

// A store written with Options.Key holds none of its chunks' pixels,
// extra data, bodies or entity sections in plaintext (the same store
// without a key holds them all), reads back exactly with the key, and
// refuses to decode without it (ErrEncrypted) or with another key
// (ErrWrongKey), neither of them damage.
func TestKeyEncryptsRecords(t *testing.T) {
	w := newSecretWorld()
	for _, keyed := range []bool{false, true} {
		mem, cfg, s := secretStore(t, keyed)
		w.expectSame(t, s)
		es := entriesByX(s)
		expect(t, es[0][0].Type == chunkstore.Full && es[1][0].Type == chunkstore.Palette && es[2][0].Type == chunkstore.Delta && es[5][0].Type == chunkstore.BodyBlock,
			"the records are not one of each kind: %v", es)
		must(t, s.Close())
		all := storeBytes(t, mem)
		for name, p := range w.plaintexts() {
			expect(t, bytes.Contains(all, p) != keyed, "keyed %v: the files hold the %s's bytes: %v", keyed, name, bytes.Contains(all, p))
		}
		if !keyed {
			continue
		}
		s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
		w.expectSame(t, s)
		must(t, s.Close())

		for _, c := range []struct {
			name string
			key  []byte
			want error
		}{{"no key", nil, archetype.ErrEncrypted}, {"another key", otherKey, archetype.ErrWrongKey}} {
			o := testConfig(mem)
			o.Key, o.ReadOnly = c.key, true
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &o))
			dst := make([]uint32, npix)
			for x := range 5 {
				_, err := s.Get(chunkstore.Pos{X: int32(x)}, dst)
				expect(t, errors.Is(err, c.want) && !errors.Is(err, chunkstore.ErrCorrupt), "%s: chunk %d: %v, want %v", c.name, x, err, c.want)
			}
			_, err := s.Entities(chunkstore.Pos{X: 5})
			expect(t, errors.Is(err, c.want) && !errors.Is(err, chunkstore.ErrCorrupt), "%s: entities: %v", c.name, err)
			must(t, s.Close())
		}
	}
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.Key = storeKey[:16]
	_, err := chunkstore.Create(storePath, &cfg)
	expect(t, errors.Is(err, archetype.ErrWrongKey), "a 16-byte key: %v", err)
}

// The dictionary shares no encrypted record: two equal chunks get a
// record each (sharing would show that they are equal), where without a
// key they share one.
func TestKeyDictionaryOff(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		_, _, s := secretStore(t, keyed)
		es := entriesByX(s)
		a, b := es[3][0].Handle.Offset, es[4][0].Handle.Offset
		expect(t, (a == b) != keyed, "keyed %v: the uniform chunks' records at %d and %d", keyed, a, b)
		must(t, s.Close())
	}
}

// Without the key a check finds an encrypted store intact, counting the
// records it could not decode; with it, it decodes them all. A flipped
// byte in an encrypted record is damage with and without the key, named
// at its offset, and the chunk reads as generated with ErrCorrupt.
func TestKeyCheckAndDamage(t *testing.T) {
	mem, cfg, s := secretStore(t, true)
	full := entriesByX(s)[0][0].Handle
	must(t, s.Close())
	expect(t, !full.IsZero(), "no record at chunk 0")

	noKey := testConfig(mem)
	noKey.ReadOnly = true
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &noKey))
	r := s.Check()
	expect(t, r.OK() && r.Encrypted == 6, "without the key: %v, %d encrypted records not decoded, want 6", r.Err(), r.Encrypted)
	must(t, s.Close())
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	r = s.Check()
	expect(t, r.OK() && r.Encrypted == 0, "with the key: %v, %d not decoded", r.Err(), r.Encrypted)
	must(t, s.Close())

	_, off := locate(storePath, full.Offset)
	flipAt(t, mem, full.Offset+int64(full.Length)/2)
	for _, o := range []chunkstore.Options{noKey, cfg} {
		o.ReadOnly = true
		s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &o))
		r := s.Check()
		var hit bool
		for _, p := range r.Problems {
			hit = hit || (p.Offset == off && errors.Is(p.Err, chunkstore.ErrCorrupt))
		}
		expect(t, hit && len(r.Problems) == 1, "key %v: the flipped record is not the one problem at offset %d: %v", o.Key != nil, off, r.Err())
		dst := make([]uint32, npix)
		stored, err := s.Get(chunkstore.Pos{X: 0}, dst)
		expect(t, !stored && errors.Is(err, chunkstore.ErrCorrupt), "key %v: the damaged chunk: %v %v", o.Key != nil, stored, err)
		expect(t, slices.Equal(dst, generated(chunkstore.Pos{X: 0}, small)), "key %v: the damaged chunk does not read as generated", o.Key != nil)
		must(t, s.Close())
	}
}

// A compaction needs no key: it moves encrypted records as they are
// stored, and they read back with the key.
func TestKeyCompactWithoutKey(t *testing.T) {
	mem, cfg, s := secretStore(t, true)
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{X: 9}, randomChunk(small, rand.New(rand.NewPCG(1, 2))))
	_, err := s.Commit(b)
	must(t, err)
	b = s.NewBatch()
	b.DeleteChunk(chunkstore.Pos{X: 9})
	_, err = s.Commit(b)
	must(t, err)
	must(t, s.Close())

	noKey := testConfig(mem)
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &noKey))
	before := storetool.Tool.Stats(s).DeadBytes
	must(t, s.Compact())
	after := storetool.Tool.Stats(s).DeadBytes
	expect(t, after < before, "the compaction freed nothing: %d dead bytes, %d before", after, before)
	must(t, s.Close())

	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	newSecretWorld().expectSame(t, s)
	r := s.Check()
	expect(t, r.OK(), "after compaction: %v", r.Err())
	must(t, s.Close())
}
