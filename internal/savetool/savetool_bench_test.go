package savetool_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// A large save for the benchmarks: 1024 chunks of 512x512 pixels.
const (
	largeChunks = 1024
	largeSize   = 512
)

var (
	largeOnce sync.Once
	largeDir  string
	largeErr  error
)

func largeSave(b *testing.B) string {
	b.Helper()
	largeOnce.Do(func() {
		// Beside the small save, removed with it.
		largeDir = filepath.Join(filepath.Dir(base), "large")
		largeErr = savetest.BuildLarge(largeDir, largeChunks, largeSize)
	})
	if largeErr != nil {
		b.Fatal(largeErr)
	}
	return largeDir
}

// storeBytes returns the bytes of the save's chunk store: chunks.pxsw and
// its data files.
func storeBytes(b *testing.B, dir string) int64 {
	names, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, e := range names {
		if store, _, ok := savedir.DataFileOf(e.Name()); e.Name() == savedir.ChunksName || ok && store == savedir.ChunksName {
			st, err := e.Info()
			if err != nil {
				b.Fatal(err)
			}
			n += st.Size()
		}
	}
	return n
}

// copyOf copies the save at src for one run of a benchmark that changes it.
func copyOf(b *testing.B, src string) string {
	dir := filepath.Join(b.TempDir(), "save")
	if err := savetest.CopyDir(src, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

func BenchmarkCheck_1024Chunks512(b *testing.B) {
	dir := largeSave(b)
	b.SetBytes(storeBytes(b, dir))
	for b.Loop() {
		r, err := savetool.Check(dir, savetool.Options{})
		if err != nil || !r.OK() {
			b.Fatal(err, r.Problems)
		}
	}
}

// Repair of a damaged page table: a scan of the whole store, a clean copy,
// the commit and a check of the result.
func BenchmarkRepairPageTable_1024Chunks512(b *testing.B) {
	src := largeSave(b)
	b.SetBytes(storeBytes(b, src))
	for b.Loop() {
		b.StopTimer()
		dir := copyOf(b, src)
		l, err := savetest.LayoutOf(dir)
		if err == nil {
			err = l.Flip(l.Table + 40)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := savetool.Repair(dir, savetool.RepairOptions{})
		if err != nil || !rep.After.OK() || !rep.Store.Rebuilt {
			b.Fatal(err, rep)
		}
	}
}

func BenchmarkCompact_1024Chunks512(b *testing.B) {
	src := largeSave(b)
	b.SetBytes(storeBytes(b, src))
	for b.Loop() {
		b.StopTimer()
		dir := copyOf(b, src)
		b.StartTimer()
		if _, err := savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1, Whole: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// Render of the whole world (16384 pixels a side) at 1:8, with the
// generator.
func BenchmarkRender_1024Chunks512(b *testing.B) {
	dir := largeSave(b)
	b.ReportAllocs()
	for b.Loop() {
		img, _, err := savetool.RenderDir(dir, savetool.RenderOptions{Generator: savetest.Generator, Scale: 8})
		if err != nil || img.Rect.Dx() != 2048 {
			b.Fatal(err, img.Rect)
		}
	}
	b.ReportMetric(float64(largeChunks)/(float64(b.Elapsed().Seconds())/float64(b.N)), "chunks/s")
}
