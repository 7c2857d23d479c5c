package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/snapshot"
)

// historySave commits 12 generations 5 minutes apart into a new save
// directory, 5 random chunks each in a world of 36 and players files of
// their own, with compaction steps between them and a retention that keeps the last 30 minutes: 6 older
// generations. It returns the directory and the save times.
func historySave(t *testing.T) (string, map[uint64]time.Time) {
	t.Helper()
	dir := t.TempDir()
	d, err := savedir.OpenDir(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	path, err := d.File(savedir.ChunksName)
	if err != nil {
		t.Fatal(err)
	}
	s, err := chunkstore.Create(path, &chunkstore.Options{ChunkSize: 16, TileSize: 8, Seed: savetest.Seed, Generator: savetest.Generator,
		DataFileSize: 8 << 10, CompactionThreshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var world bytes.Buffer
	if err := archetype.Encode(&world, ecs.NewWorld()); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(25, 5))
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	times := map[uint64]time.Time{}
	for g := 1; g <= 12; g++ {
		b := s.NewBatch()
		for i := range 36 {
			if g == 1 || i < 5 {
				pix := make([]uint32, 16*16)
				for j := range pix {
					pix[j] = rng.Uint32()
				}
				b.PutChunk(chunkstore.Pos{X: int32(i % 6), Y: int32(i / 6)}, pix)
			}
		}
		if _, err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
		for s.NeedsCompaction() {
			if _, _, err := s.CompactNext(); err != nil {
				t.Fatal(err)
			}
		}
		times[uint64(g)] = base.Add(time.Duration(g) * 5 * time.Minute)
		// Players files of each generation's own: the older generations'
		// are theirs alone.
		players, err := d.WritePlayersFiles(uint64(g), []snapshot.PlayerRecord{{ID: "ada", Section: []byte(fmt.Sprint("ada at ", g))}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.Commit(savedir.Commit{World: world.Bytes(), Players: &players, Retention: autosave.Retention{All: 30 * time.Minute}, Now: times[uint64(g)],
			Chunks: savedir.StoreRef{Name: savedir.ChunksName, Generation: s.Generation(), Root: s.Root(), Data: storetool.Tool.DataFileNames(s)}}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, times
}

// arksave inspect shows what history costs: the older generations kept,
// when they were saved, the data files only they use and their world
// files, each counted from the directory's files.
func TestInspectShowsHistory(t *testing.T) {
	dir, times := historySave(t)
	d, err := savedir.OpenDirReadOnly(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]bool{}
	for _, n := range d.Manifest().Chunks.Data {
		current[n] = true
	}
	var oldFiles int
	var oldBytes, worldBytes int64
	entries, _ := os.ReadDir(dir)
	current[d.Manifest().Players.Index.Name] = true
	current[d.Manifest().Players.Data] = true
	for _, e := range entries {
		_, _, data := savedir.DataFileOf(e.Name())
		players := strings.HasPrefix(e.Name(), "players-")
		if (data || players) && !current[e.Name()] {
			fi, _ := e.Info()
			oldFiles++
			oldBytes += fi.Size()
		}
	}
	backups, _ := os.ReadDir(filepath.Join(dir, savedir.BackupDir))
	for _, e := range backups {
		if strings.HasPrefix(e.Name(), "world-") {
			fi, _ := e.Info()
			worldBytes += fi.Size()
		}
	}
	if oldFiles == 0 || worldBytes == 0 {
		t.Fatalf("the save has %d data files only older generations use and %d bytes of their world files: the test needs both", oldFiles, worldBytes)
	}

	code, stdout, stderr := arksave("inspect", dir)
	expectCode(t, 0, code, stderr)
	const at = "2006-01-02 15:04:05"
	want := fmt.Sprintf("history: 6 older generations saved %s to %s; %d store and players files (%s) only they use, %s of their world files\n",
		times[6].Format(at), times[11].Format(at), oldFiles, bytesStr(oldBytes), bytesStr(worldBytes))
	if !strings.Contains(stdout, want) {
		t.Fatalf("inspect does not show\n%s\nin\n%s", want, stdout)
	}

	code, stdout, stderr = arksave("inspect", "--json", dir)
	expectCode(t, 0, code, stderr)
	var out struct {
		History *savetool.HistoryInfo `json:"history"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	h := out.History
	if h == nil || h.Generations != 6 || !h.Oldest.Equal(times[6]) || !h.Newest.Equal(times[11]) ||
		h.DataFiles != oldFiles || h.DataBytes != oldBytes || h.WorldBytes != worldBytes || h.Unknown != 0 {
		t.Fatalf("history %+v, want 6 generations from %v to %v, %d files of %d bytes, %d world bytes", h, times[6], times[11], oldFiles, oldBytes, worldBytes)
	}
}
