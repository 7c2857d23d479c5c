package savedir

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/arksave/arksave/autosave"
)

// FuzzDecodeManifest: a manifest that decodes is in canonical form (it
// encodes back to the same bytes) and every name it holds has its field's
// form; anything else is an error matching ErrCorrupt or ErrVersion, never
// a panic.
func FuzzDecodeManifest(f *testing.F) {
	good := &Manifest{Version: ManifestVersion, Generation: 7, CreatedMS: 1, ModifiedMS: 2,
		World:  FileRef{Name: WorldName(7), Size: 100, CRC32C: 0xdeadbeef},
		Chunks: StoreRef{Name: CompactedChunksName(5), Generation: 9, Root: bytes.Repeat([]byte{1}, 64)}}
	f.Add(good.encode(), false)
	v1 := *good
	v1.Version, v1.Chunks.Root = 1, nil
	f.Add(v1.encode(), false)
	b := *good
	b.World.Name = "backups/" + WorldName(7)
	f.Add(b.encode(), true)
	withPlayers := *good
	withPlayers.Players = &PlayersRef{Index: FileRef{Name: PlayersName(6), Size: 44, CRC32C: 9}, Data: PlayersDataName}
	f.Add(withPlayers.encode(), false)
	d := *good
	d.Chunks.Data = []string{"chunks-5-data-1.pxsd", "chunks-5-data-3.pxsd"}
	f.Add(d.encode(), false)
	own := b
	own.Chunks = StoreRef{Name: CopiedChunksName(7), Generation: 2, Root: bytes.Repeat([]byte{1}, 64),
		Data: []string{"backups/chunks-7-data-1.pxsd"}}
	f.Add(own.encode(), true)
	f.Add(own.encode(), false) // a current manifest never names a backup's own store
	ownPlayers := own
	ownPlayers.Players = &PlayersRef{Index: FileRef{Name: CopiedPlayersName(7), Size: 44, CRC32C: 9}, Data: CopiedPlayersDataName(7)}
	f.Add(ownPlayers.encode(), true)
	f.Add(ownPlayers.encode(), false) // nor a backup's own players
	for _, bad := range []*PlayersRef{
		{Index: FileRef{Name: CopiedPlayersName(6)}, Data: CopiedPlayersDataName(6)},
		{Index: FileRef{Name: CopiedPlayersName(7)}, Data: PlayersDataName},
		{Index: FileRef{Name: PlayersName(7)}, Data: CopiedPlayersDataName(7)},
		{Index: FileRef{Name: "backups/../" + PlayersName(7)}, Data: CopiedPlayersDataName(7)},
	} {
		m := ownPlayers
		m.Players = bad
		f.Add(m.encode(), true)
	}
	for _, bad := range []func(m *Manifest){
		func(m *Manifest) { m.Chunks.Name = CopiedChunksName(6) },
		func(m *Manifest) { m.Chunks.Data = []string{"chunks-7-data-1.pxsd"} },
		func(m *Manifest) { m.Chunks.Data = []string{"backups/chunks-6-data-1.pxsd"} },
		func(m *Manifest) { m.Chunks.Data = []string{"backups/../chunks-7-data-1.pxsd"} },
		func(m *Manifest) { m.Chunks.Name = "backups/chunks.pxsw" },
	} {
		m := own
		bad(&m)
		f.Add(m.encode(), true)
	}
	for _, bad := range []func(m *Manifest){
		func(m *Manifest) { m.Chunks.Data = []string{"chunks-data-1.pxsd"} },
		func(m *Manifest) { m.Chunks.Data = []string{"chunks-5-data-3.pxsd", "chunks-5-data-1.pxsd"} },
		func(m *Manifest) { m.Chunks.Data = []string{"../chunks-5-data-1.pxsd"} },
		func(m *Manifest) { m.Version, m.Chunks.Data = 2, []string{"chunks-5-data-1.pxsd"} },
		func(m *Manifest) { m.World.Name = "../../x" },
		func(m *Manifest) {
			m.Players = &PlayersRef{Index: FileRef{Name: "../players-1.pxpl"}, Data: PlayersDataName}
		},
		func(m *Manifest) {
			m.Players = &PlayersRef{Index: FileRef{Name: PlayersName(8)}, Data: PlayersDataName}
		},
		func(m *Manifest) {
			m.Players = &PlayersRef{Index: FileRef{Name: PlayersName(1)}, Data: "/etc/players.pxpd"}
		},
		func(m *Manifest) { m.Chunks.Name = "/etc/x.pxsw" },
		func(m *Manifest) { m.Generation = math.MaxUint64 },
		func(m *Manifest) { m.Chunks.Name = "chunks-1-backup-2-1.pxsw" },
	} {
		m := *good
		bad(&m)
		f.Add(m.encode(), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, backup bool) {
		m, err := decodeManifest(data, backup)
		if err != nil {
			if !errors.Is(err, autosave.ErrCorrupt) && !errors.Is(err, autosave.ErrVersion) {
				t.Fatalf("error matches neither ErrCorrupt nor ErrVersion: %v", err)
			}
			return
		}
		if !bytes.Equal(m.encode(), data) {
			t.Fatalf("decoded manifest does not encode back to its bytes")
		}
		if g, copied := copiedStoreGeneration(m.Chunks.Name); copied && (!backup || g != m.Generation) {
			t.Fatalf("accepted the own store %q of backup %d in manifest %d (backup %v)", m.Chunks.Name, g, m.Generation, backup)
		}
		if checkManifestNames(m, backup) != nil || !formName(m.World.Name) || !formName(m.Chunks.Name) ||
			strings.Contains(m.World.Name, "..") || strings.HasPrefix(m.Chunks.Name, "/") {
			t.Fatalf("accepted names %q, %q", m.World.Name, m.Chunks.Name)
		}
		if p := m.Players; p != nil {
			g, ok := playersGeneration(p.Index.Name)
			if cg, copied := copiedPlayersGeneration(p.Index.Name); copied {
				if !backup || cg != m.Generation || p.Data != CopiedPlayersDataName(cg) {
					t.Fatalf("accepted the own players %q, %q of backup %d in manifest %d (backup %v)", p.Index.Name, p.Data, cg, m.Generation, backup)
				}
				g, ok = cg, true
			}
			if !ok || g > m.Generation || !formName(p.Index.Name) || !formName(p.Data) {
				t.Fatalf("accepted players names %q, %q at generation %d", p.Index.Name, p.Data, m.Generation)
			}
		}
		for _, n := range m.Chunks.Data {
			if store, _, ok := dataFileOf(n); !ok || store != m.Chunks.Name || !formName(n) || strings.Contains(n, "..") {
				t.Fatalf("accepted data file %q of store %q", n, m.Chunks.Name)
			}
		}
	})
}

// The forms of the names a save directory holds.
func TestNameForms(t *testing.T) {
	for name, want := range map[string]bool{
		"manifest": true, "manifest.tmp": true, "lock": true, "lock.tmp": false,
		"world-1.pecs": true, "world-1.pecs.tmp": true, "world-0.pecs": false, "world-01.pecs": false, "world-+1.pecs": false,
		"world-9223372036854775807.pecs": true, "world-9223372036854775808.pecs": false, "world-18446744073709551615.pecs": false,
		"chunks.pxsw": true, "chunks-3.pxsw": true, "chunks-3.pxsw.tmp": true, "chunks-3-backup-2.pxsw": true,
		"chunks-3-backup-2-2.pxsw": true, "chunks-3-backup-2-1.pxsw": false, "chunks-3-other-2.pxsw": false, "chunks-.pxsw": false,
		"backups/manifest-4": true, "backups/world-4.pecs": true, "backups/chunks.pxsw": false, "backups/../world-1.pecs": false,
		"../world-1.pecs": false, "/world-1.pecs": false, "world-1.pecs/../x": false, "backups": false, "notes.txt": false, "": false,
		"players-3.pxpl": true, "players-3.pxpl.tmp": true, "players-0.pxpl": false, "players-.pxpl": false, "backups/players-3.pxpl": true,
		"backups/players-3.pxpd": true, "backups/players-3.pxpl.tmp": true, "backups/players.pxpd": false, "backups/players-03.pxpl": false,
		"backups/players-0.pxpd": false, "backups/x/players-3.pxpl": false,
		"players.pxpd": true, "players-4.pxpd": true, "players-04.pxpd": false, "players.pxpl": false, "../players.pxpd": false,
		"chunks-data-1.pxsd": true, "chunks-3-data-12.pxsd": true, "chunks-3-backup-2-data-1.pxsd": true, "chunks-data-0.pxsd": false,
		"chunks-data-01.pxsd": false, "chunks-data-4194304.pxsd": false, "other-data-1.pxsd": false, "backups/chunks-data-1.pxsd": false,
		"chunks-data-1.pxsw": false, "../chunks-data-1.pxsd": false,
		"backups/chunks-4.pxsw": true, "backups/chunks-4.pxsw.tmp": true, "backups/chunks-4-data-2.pxsd": true,
		"backups/chunks-04.pxsw": false, "backups/chunks-0.pxsw": false, "backups/chunks-4-backup-2.pxsw": false,
		"backups/chunks-4-backup-2-data-1.pxsd": false, "backups/chunks-4-data-0.pxsd": false, "backups/x/chunks-4.pxsw": false,
		"backups/../chunks-4.pxsw": false, "chunks-4-data-2.pxsd/../backups/chunks-4.pxsw": false,
	} {
		if got := formName(name); got != want {
			t.Errorf("formName(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzParsePlayers feeds arbitrary bytes to the players index and record
// parsers: what parses encodes back to the same bytes, anything else is
// ErrCorrupt or ErrVersion, never a panic, and nothing is allocated that the
// input's length does not justify (counts are checked against it).
func FuzzParsePlayers(f *testing.F) {
	rec := AppendPlayerRecord(nil, "ada", []byte("PECS section bytes"))
	idx := EncodePlayersIndex(3, []PlayerEntry{
		{ID: "ada", Offset: playersDataHeaderSize, Length: uint32(len(rec)), CRC32C: 1},
		{ID: "bob", Offset: 200, Length: 40, CRC32C: 2},
	})
	f.Add(idx)
	f.Add(EncodePlayersIndex(1, nil))
	f.Add(rec)
	f.Fuzz(func(t *testing.T, data []byte) {
		gen, entries, err := ParsePlayersIndex(data)
		if err != nil {
			if !errors.Is(err, autosave.ErrCorrupt) && !errors.Is(err, autosave.ErrVersion) {
				t.Fatalf("index: %v matches neither ErrCorrupt nor ErrVersion", err)
			}
		} else if !bytes.Equal(EncodePlayersIndex(gen, entries), data) {
			t.Fatal("an index that parses does not encode back to its bytes")
		}
		id := "ada"
		if len(data) > 5 && int(data[4])+5 <= len(data) {
			id = string(data[5 : 5+int(data[4])])
		}
		sec, err := ParsePlayerRecord(data, 8, id)
		if err != nil {
			if !errors.Is(err, autosave.ErrCorrupt) {
				t.Fatalf("record: %v does not match ErrCorrupt", err)
			}
		} else if !bytes.Equal(AppendPlayerRecord(nil, id, sec), data) {
			t.Fatal("a record that parses does not encode back to its bytes")
		}
	})
}

// A players index and its records: what is written reads back, damage is
// found wherever it is.
func TestPlayersIndexAndRecords(t *testing.T) {
	entries := []PlayerEntry{{ID: "ada", Offset: 8, Length: 30, CRC32C: 7}, {ID: "zed", Offset: 38, Length: 31, CRC32C: 8}}
	idx := EncodePlayersIndex(9, entries)
	gen, got, err := ParsePlayersIndex(idx)
	if err != nil || gen != 9 || len(got) != 2 || got[1] != entries[1] {
		t.Fatalf("%v %d %+v", err, gen, got)
	}
	for i := range idx {
		bad := bytes.Clone(idx)
		bad[i] ^= 0x40
		if _, _, err := ParsePlayersIndex(bad); err == nil {
			t.Fatalf("index with byte %d flipped parses", i)
		}
	}
	unsorted := EncodePlayersIndex(1, []PlayerEntry{entries[1], entries[0]})
	if _, _, err := ParsePlayersIndex(unsorted); !errors.Is(err, autosave.ErrCorrupt) {
		t.Fatalf("ids out of order: %v", err)
	}
	rec := AppendPlayerRecord(nil, "ada", []byte("section"))
	if sec, err := ParsePlayerRecord(rec, 8, "ada"); err != nil || string(sec) != "section" {
		t.Fatalf("%v %q", err, sec)
	}
	if _, err := ParsePlayerRecord(rec, 8, "bob"); !errors.Is(err, autosave.ErrCorrupt) {
		t.Fatalf("another player's record: %v", err)
	}
	for i := range rec {
		bad := bytes.Clone(rec)
		bad[i] ^= 0x01
		if _, err := ParsePlayerRecord(bad, 8, "ada"); err == nil {
			t.Fatalf("record with byte %d flipped parses", i)
		}
	}
}
