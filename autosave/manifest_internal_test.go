package autosave

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
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
	d := *good
	d.Chunks.Data = []string{"chunks-5-data-1.pxsd", "chunks-5-data-3.pxsd"}
	f.Add(d.encode(), false)
	for _, bad := range []func(m *Manifest){
		func(m *Manifest) { m.Chunks.Data = []string{"chunks-data-1.pxsd"} },
		func(m *Manifest) { m.Chunks.Data = []string{"chunks-5-data-3.pxsd", "chunks-5-data-1.pxsd"} },
		func(m *Manifest) { m.Chunks.Data = []string{"../chunks-5-data-1.pxsd"} },
		func(m *Manifest) { m.Version, m.Chunks.Data = 2, []string{"chunks-5-data-1.pxsd"} },
		func(m *Manifest) { m.World.Name = "../../x" },
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
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error matches neither ErrCorrupt nor ErrVersion: %v", err)
			}
			return
		}
		if !bytes.Equal(m.encode(), data) {
			t.Fatalf("decoded manifest does not encode back to its bytes")
		}
		if checkManifestNames(m, backup) != nil || !formName(m.World.Name) || !formName(m.Chunks.Name) ||
			strings.Contains(m.World.Name, "..") || strings.HasPrefix(m.Chunks.Name, "/") {
			t.Fatalf("accepted names %q, %q", m.World.Name, m.Chunks.Name)
		}
		for _, n := range m.Chunks.Data {
			if store, _, ok := DataFileOf(n); !ok || store != m.Chunks.Name || !formName(n) {
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
		"chunks-data-1.pxsd": true, "chunks-3-data-12.pxsd": true, "chunks-3-backup-2-data-1.pxsd": true, "chunks-data-0.pxsd": false,
		"chunks-data-01.pxsd": false, "chunks-data-4194304.pxsd": false, "other-data-1.pxsd": false, "backups/chunks-data-1.pxsd": false,
		"chunks-data-1.pxsw": false, "../chunks-data-1.pxsd": false,
	} {
		if got := formName(name); got != want {
			t.Errorf("formName(%q) = %v, want %v", name, got, want)
		}
	}
}
