package cli

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	arksaveplugin "github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// encryptedChunkSave makes a save of the test game with Plugin.Key whose
// chunks are stored (chunk (0,0) painted, a crate standing in it), in two
// generations (chunk (0,0) painted again in the second), and returns its
// directory and key files: the key in hexadecimal and another key.
func encryptedChunkSave(t *testing.T) (dir, hexKey, wrongKey string) {
	t.Helper()
	key := bytes.Repeat([]byte{0x3c}, 32)
	dir = filepath.Join(t.TempDir(), "save")
	g := gametest.New(t, gametest.Opts{Dir: dir, Radius: 1, Autosave: gametest.NoBackupCopy(), Prepare: gametest.RegisterRegional,
		Plugin: func(p *arksaveplugin.Plugin) { p.Key = key }})
	g.Settle(t)
	for i := range 40 {
		g.Paint(t, 0, 0, i%gametest.ChunkSize, i/gametest.ChunkSize, components.MakePixel(9, uint8(i%4), 0, 0))
	}
	g.SpawnCrate(5, 6, 0, 4242)
	g.Tick()
	must(t, g.Pers.SaveNow().Err)
	g.Paint(t, 0, 0, 20, 20, components.MakePixel(11, 0, 0, 0))
	must(t, g.Pers.SaveNow().Err)
	must(t, g.Pers.Close())
	keys := t.TempDir()
	hexKey, wrongKey = filepath.Join(keys, "hex"), filepath.Join(keys, "wrong")
	must(t, os.WriteFile(hexKey, []byte(hex.EncodeToString(key)+"\n"), 0o600))
	must(t, os.WriteFile(wrongKey, bytes.Repeat([]byte{1}, 32), 0o600))
	return dir, hexKey, wrongKey
}

// The tools read the chunks of an encrypted save with --key-file; render,
// export and diff without it (or with another key) fail naming --key-file.
func TestKeyFileReadsChunks(t *testing.T) {
	dir, hexKey, wrongKey := encryptedChunkSave(t)
	png := filepath.Join(t.TempDir(), "map.png")
	code, stdout, stderr := arksave("render", "-o", png, "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectNot(t, stdout+stderr, "damaged")
	for _, k := range []string{"", wrongKey} {
		args := []string{"render", "-o", png, dir}
		if k != "" {
			args = append(args, "--key-file", k)
		}
		code, _, stderr = arksave(args...)
		expectCode(t, 1, code, stderr)
		expectContains(t, stderr, "--key-file")
	}

	code, stdout, stderr = arksave("export", "--json", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, `"type": "full"`, `"x": 0`)
	code, _, stderr = arksave("export", "--json", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "--key-file")

	code, stdout, stderr = arksave("diff", "--key-file", hexKey, dir, "1", "2")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "(0, 0)")
	expectNot(t, stdout+stderr, "damaged")
	code, _, stderr = arksave("diff", dir, "1", "2")
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "chunk records are encrypted", "--key-file")

	code, stdout, stderr = arksave("inspect", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "encrypted", "chunk records with the save's key")
}

// check without the key finds an encrypted save intact and says what it
// could not verify; with the key it verifies everything; with another key
// it fails. A flipped byte in an encrypted record is damage, named with
// its file and offset, with or without the key. compact needs no key and
// keeps the records readable with it.
func TestKeyFileCheckChunks(t *testing.T) {
	dir, hexKey, wrongKey := encryptedChunkSave(t)
	code, stdout, stderr := arksave("check", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found", "encrypted chunk records are intact as stored", "not damage", "--key-file")
	code, stdout, stderr = arksave("check", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found")
	expectNot(t, stdout, "encrypted")
	code, stdout, stderr = arksave("check", "--key-file", wrongKey, dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "not the key this save was written with")

	code, _, stderr = arksave("compact", dir)
	expectCode(t, 0, code, stderr)
	code, stdout, stderr = arksave("check", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found")
	code, _, stderr = arksave("render", "-o", filepath.Join(t.TempDir(), "map.png"), "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)

	s, m := gametest.OpenCommittedStore(t, vfs.OS, dir)
	var h storetool.Handle
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Pos == (chunkstore.Pos{}) && e.Type != chunkstore.BodyBlock {
			h = e.Handle
		}
		return true
	})
	must(t, s.Close())
	if h.IsZero() || h.File() == 0 {
		t.Fatalf("no record of chunk (0,0) in a data file: %+v", h)
	}
	name := storetool.Tool.DataFileName(m.Chunks.Name, h.File())
	gametest.FlipAt(t, vfs.OS, filepath.Join(dir, name), h.FileOffset()+int64(h.Length)/2)
	for _, k := range []string{"", hexKey} {
		args := []string{"check", dir}
		if k != "" {
			args = []string{"check", "--key-file", k, dir}
		}
		code, stdout, stderr = arksave(args...)
		expectCode(t, 1, code, stderr)
		expectContains(t, stdout, name, fmt.Sprint(h.FileOffset()), "chunk (0, 0)", "checksum")
		if strings.Contains(stdout, "wrong key") {
			t.Fatalf("check calls damage a wrong key:\n%s", stdout)
		}
	}
}

// repair takes no key: the encrypted chunk records of a save that lost
// its manifest are kept as stored, and read back with the key.
func TestRepairKeepsEncryptedChunks(t *testing.T) {
	dir, hexKey, _ := encryptedChunkSave(t)
	must(t, os.Remove(filepath.Join(dir, "manifest")))
	code, stdout, stderr := arksave("repair", dir)
	expectCode(t, 0, code, stderr)
	expectNot(t, stdout, "dropped", "damaged")
	code, stdout, stderr = arksave("check", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found")
	code, stdout, stderr = arksave("diff", "--key-file", hexKey, dir, "1", "3") // repair commits generation 3
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "(0, 0)")
}
