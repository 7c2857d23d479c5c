package savedir_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// progressLog records every progress value a writer publishes.
type progressLog struct {
	mu     sync.Mutex
	values []float32
}

func (l *progressLog) add(p float32) {
	l.mu.Lock()
	l.values = append(l.values, p)
	l.mu.Unlock()
}

// take returns the values since the last call.
func (l *progressLog) take() []float32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.values
	l.values = nil
	return out
}

// noisySnap is a save of n random chunks, so that each takes a Full record.
func noisySnap(n int, seed uint64) *snapshot.Snapshot {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := &snapshot.Snapshot{World: make([]byte, 64<<10)}
	for i := range n {
		pix := make([]uint32, size*size)
		for k := range pix {
			pix[k] = rng.Uint32()
		}
		c := components.NewChunk(size, conv.Pixels(pix))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: components.ChunkPos{X: int32(i % 16), Y: int32(i / 16)}, Buf: c.Share(), Version: 1})
	}
	return s
}

// expectRising checks that a save's published progress rose step by step
// from above 0 and ended as want says: at 1 exactly for a committed save,
// below 1 for a failed one.
func expectRising(t *testing.T, vals []float32, committed bool, minSteps int) {
	t.Helper()
	expect(t, len(vals) >= minSteps, "%d progress values, want at least %d: %v", len(vals), minSteps, vals)
	for i, v := range vals {
		expect(t, v > 0 && v <= 1, "progress %v out of range", v)
		if i > 0 {
			expect(t, v > vals[i-1], "progress went from %v to %v", vals[i-1], v)
		}
		if v == 1 {
			expect(t, committed && i == len(vals)-1, "progress 1 at step %d of %d (committed %v)", i, len(vals), committed)
		}
	}
	if last := vals[len(vals)-1]; committed {
		expect(t, last == 1, "a committed save ends at %v", last)
	} else {
		expect(t, last < 1, "a failed save shows %v", last)
	}
}

// TestProgressMovesWithTheWork: a save of 200 chunks publishes progress
// chunk by chunk and as its bytes are written, rising all the way, and
// reaches 1 only with its manifest in place.
func TestProgressMovesWithTheWork(t *testing.T) {
	mem := vfs.NewMem()
	o := savedir.Options{FS: mem, Store: storeConfig()}
	o.Store.DataFileSize = 1 << 20
	w, err := savedir.OpenWriter("/save", o)
	must(t, err)
	defer w.Close()
	var log progressLog
	var atOne []uint64 // the generation the directory had whenever 1 was published
	savedir.SetProgressHook(w, func(p float32) {
		log.add(p)
		if p == 1 {
			d, err := savedir.OpenDirReadOnly(mem, "/save")
			if err == nil {
				atOne = append(atOne, d.Generation())
			}
		}
	})
	for g := 1; g <= 2; g++ {
		expect(t, w.Submit(savedir.Job{Snap: noisySnap(200, uint64(g)), MaxBackups: 1}), "submit")
		res := w.Wait()
		must(t, res.Err)
		vals := log.take()
		// 200 chunks: one step each at least, but for steps below the
		// resolution of a millionth.
		expectRising(t, vals, true, 150)
		expect(t, len(atOne) == g && atOne[g-1] == uint64(g), "progress 1 published with the directory at generation %v, want %d", atOne, g)
		mid := 0
		for _, v := range vals {
			if v > 0.2 && v < 0.9 {
				mid++
			}
		}
		expect(t, mid >= 50, "only %d progress values between 0.2 and 0.9: %v", mid, vals)
		expect(t, w.Progress() == 1, "Progress() after the commit: %v", w.Progress())
	}
}

// TestProgressOfAFailedSave: a save that fails at any step, the manifest's
// rename included, never publishes 1.
func TestProgressOfAFailedSave(t *testing.T) {
	cases := map[string]func(op vfs.Op, name string, renamed bool) bool{
		"write":  func(op vfs.Op, _ string, _ bool) bool { return op == vfs.OpWrite },
		"sync":   func(op vfs.Op, _ string, _ bool) bool { return op == vfs.OpSync },
		"rename": func(op vfs.Op, _ string, _ bool) bool { return op == vfs.OpRename },
		// The manifest is renamed, but the directory's sync fails: the
		// outcome is unknown, and the save reports failure.
		"sync-dir-after-rename": func(op vfs.Op, _ string, renamed bool) bool { return op == vfs.OpSyncDir && renamed },
	}
	for name, failOn := range cases {
		t.Run(name, func(t *testing.T) {
			mem := vfs.NewMem()
			fail, renamed := false, false
			fsys := vfs.Faulty(mem, vfs.InjectorFunc(func(op vfs.Op, name string) error {
				if fail && failOn(op, name, renamed) {
					return errors.New("injected")
				}
				if op == vfs.OpRename && strings.HasSuffix(name, savedir.ManifestName+".tmp") {
					renamed = true
				}
				return nil
			}))

			w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: storeConfig()})
			must(t, err)
			defer w.Close()
			var log progressLog
			savedir.SetProgressHook(w, log.add)
			fail = true
			expect(t, w.Submit(savedir.Job{Snap: noisySnap(20, 1), MaxBackups: 1}), "submit")
			res := w.Wait()
			expect(t, res.Err != nil, "the save did not fail")
			vals := log.take()
			expectRising(t, vals, false, 1)
			expect(t, w.Progress() < 1, "Progress() after a failed save: %v", w.Progress())
		})
	}
}
