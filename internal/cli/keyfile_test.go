package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	arksaveplugin "github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/pecs"
)

// Diary is a component whose text an encrypted save hides.
type Diary struct{ Text string }

const diarySecret = "the-dragon-hoard-is-under-the-old-oak"

// encryptedSave makes a save with Plugin.Key (a world entity and a player
// holding diarySecret) and returns its directory and key files: the key in
// hexadecimal, raw, and another key.
func encryptedSave(t *testing.T) (dir, hexKey, rawKey, wrongKey string) {
	t.Helper()
	key := bytes.Repeat([]byte{0x3c}, 32)
	dir = filepath.Join(t.TempDir(), "save")
	w := ecs.NewWorld()
	ecs.ComponentID[Diary](w)
	_, err := arksaveplugin.Plugin{Dir: dir, ChunkSize: 32, Key: key}.Install(w)
	must(t, err)
	p := ecs.GetResource[arksaveplugin.Persistence](w)
	ecs.NewMap1[Diary](w).NewEntity(&Diary{Text: diarySecret})
	ecs.NewMap2[components.Player, Diary](w).NewEntity(&components.Player{ID: "ada"}, &Diary{Text: diarySecret})
	must(t, p.SaveNow().Err)
	must(t, p.Close())
	keys := t.TempDir()
	hexKey, rawKey, wrongKey = filepath.Join(keys, "hex"), filepath.Join(keys, "raw"), filepath.Join(keys, "wrong")
	must(t, os.WriteFile(hexKey, []byte(hex.EncodeToString(key)+"\n"), 0o600))
	must(t, os.WriteFile(rawKey, key, 0o600))
	must(t, os.WriteFile(wrongKey, bytes.Repeat([]byte{1}, 32), 0o600))
	return dir, hexKey, rawKey, wrongKey
}

func TestKeyFileExport(t *testing.T) {
	dir, hexKey, rawKey, wrongKey := encryptedSave(t)
	for _, k := range []string{hexKey, rawKey} {
		code, stdout, stderr := arksave("export", "--json", "--key-file", k, dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, diarySecret, pkg+"Diary")
	}
	code, stdout, stderr := arksave("export", "--json", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "encrypted", "--key-file")
	if strings.Contains(stdout, diarySecret) {
		t.Fatal("export without the key wrote the secret")
	}
	code, _, stderr = arksave("export", "--json", "--key-file", wrongKey, dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "wrong key")

	// A world file on its own.
	worlds, _ := filepath.Glob(filepath.Join(dir, "*.pecs"))
	if len(worlds) == 0 {
		t.Fatal("no world file in the save")
	}
	code, stdout, stderr = arksave("export", "--json", "--key-file", hexKey, worlds[0])
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, diarySecret)

	// A key file that is no key.
	bad := filepath.Join(t.TempDir(), "short")
	must(t, os.WriteFile(bad, []byte("0123"), 0o600))
	code, _, stderr = arksave("export", "--json", "--key-file", bad, dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "4 bytes", "64 hexadecimal characters")
}

func TestKeyFileCheckAndInspect(t *testing.T) {
	dir, hexKey, _, wrongKey := encryptedSave(t)
	// Without the key: intact as stored, not damage, and said so.
	code, stdout, stderr := arksave("check", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found", "cannot be verified without the key", "not damage")
	code, stdout, stderr = arksave("check", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found")
	if strings.Contains(stdout, "encrypted") {
		t.Fatalf("check with the key still calls files unverified:\n%s", stdout)
	}
	code, stdout, stderr = arksave("check", "--key-file", wrongKey, dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "not the key this save was written with")

	worlds, _ := filepath.Glob(filepath.Join(dir, "*.pecs"))
	code, stdout, stderr = arksave("inspect", worlds[0])
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "flags: ", "encrypted", "--key-file")
	code, stdout, stderr = arksave("inspect", "--json", worlds[0])
	expectCode(t, 0, code, stderr)
	var js struct {
		Header struct{ Flags uint32 }
		Error  string
	}
	must(t, json.Unmarshal([]byte(stdout), &js))
	if js.Header.Flags&pecs.FlagEncrypted == 0 || !strings.Contains(js.Error, "encrypted") {
		t.Fatalf("inspect --json of an encrypted file: %s", stdout)
	}
	code, stdout, stderr = arksave("inspect", "--key-file", hexKey, worlds[0])
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "encrypted", pkg+"Diary")

	// A save directory: the world file is encrypted, not damaged.
	code, stdout, stderr = arksave("inspect", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "encrypted", "ok as stored", "--key-file")
	code, stdout, stderr = arksave("inspect", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "encrypted", pkg+"Diary", ": ok")

	// Damage is still damage without the key.
	damage(t, worlds[0])
	code, stdout, stderr = arksave("check", worlds[0])
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "problem")
}

// repair takes no key: an encrypted world file and players' records that
// are intact as stored are kept, not taken for damage.
func TestRepairKeepsEncryptedFiles(t *testing.T) {
	dir, hexKey, _, _ := encryptedSave(t)
	must(t, os.Remove(filepath.Join(dir, "manifest")))
	code, stdout, stderr := arksave("repair", dir)
	expectCode(t, 0, code, stderr)
	expectNot(t, stdout, "no intact ECS world file")
	code, stdout, stderr = arksave("export", "--json", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, diarySecret)
	code, stdout, stderr = arksave("check", "--key-file", hexKey, dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found", "players index")
}

// diff reads the world files of an encrypted save with --key-file; without
// it, it says they are encrypted.
func TestKeyFileDiff(t *testing.T) {
	dir, hexKey, _, _ := encryptedSave(t)
	w := ecs.NewWorld()
	ecs.ComponentID[Diary](w)
	_, err := arksaveplugin.Plugin{Dir: dir, Load: true, ChunkSize: 32, Key: bytes.Repeat([]byte{0x3c}, 32)}.Install(w)
	must(t, err)
	p := ecs.GetResource[arksaveplugin.Persistence](w)
	ecs.NewMap1[Diary](w).NewEntity(&Diary{Text: "a second entry"})
	must(t, p.SaveNow().Err)
	must(t, p.Close())

	code, stdout, stderr := arksave("diff", "--key-file", hexKey, dir, "1", "2")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "world entit")
	if strings.Contains(stdout, "encrypted") {
		t.Fatalf("diff with the key:\n%s", stdout)
	}
	code, stdout, stderr = arksave("diff", dir, "1", "2")
	expectCode(t, 0, code, stderr)
	expectContains(t, stderr, "encrypted and were not compared", "--key-file")
	if strings.Contains(stdout+stderr, "damaged") {
		t.Fatalf("diff without the key calls encrypted files damaged:\n%s%s", stdout, stderr)
	}
}
