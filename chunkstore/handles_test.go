package chunkstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// openCounter is a file system that counts the files open at once.
type openCounter struct {
	vfs.FS
	mu       sync.Mutex
	now, max int
}

type countedFile struct {
	vfs.File
	c    *openCounter
	once sync.Once
}

func (c *openCounter) opened(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	c.mu.Lock()
	c.now++
	c.max = max(c.max, c.now)
	c.mu.Unlock()
	return &countedFile{File: f, c: c}, nil
}

func (f *countedFile) Close() error {
	f.once.Do(func() {
		f.c.mu.Lock()
		f.c.now--
		f.c.mu.Unlock()
	})
	return f.File.Close()
}

func (c *openCounter) Create(name string) (vfs.File, error) { return c.opened(c.FS.Create(name)) }
func (c *openCounter) Open(name string) (vfs.File, error)   { return c.opened(c.FS.Open(name)) }
func (c *openCounter) OpenRW(name string) (vfs.File, error) { return c.opened(c.FS.OpenRW(name)) }

func (c *openCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = c.now
}

// A store of 10,000 data files reads every chunk correctly with at most
// 64 of them open (plus the store file), from several goroutines at once.
func TestBoundedOpenFiles(t *testing.T) {
	const chunks, size = 10_000, 16
	fsys := &openCounter{FS: vfs.NewMem()}
	opts := func() *chunkstore.Options {
		// 1 KiB data files: every incompressible chunk record gets one.
		return &chunkstore.Options{FS: fsys, ChunkSize: size, TileSize: size, DataFileSize: 1024, BaseCache: -1}
	}
	s, err := chunkstore.Create("/chunks.pxsw", opts())
	if err != nil {
		t.Fatal(err)
	}
	pix := func(i int) []uint32 {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		p := make([]uint32, size*size)
		for j := range p {
			p[j] = r.Uint32() | 1
		}
		return p
	}
	b := s.NewBatch()
	for i := range chunks {
		b.PutChunk(chunkstore.Pos{X: int32(i % 100), Y: int32(i / 100)}, pix(i))
	}
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if n := len(vfsData(t, fsys)); n < chunks {
		t.Fatalf("%d data files, want one a chunk (%d)", n, chunks)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	fsys.reset()
	s, err = chunkstore.Open("/chunks.pxsw", opts())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]uint32, size*size)
			for i := w; i < chunks; i += 4 {
				stored, err := s.Get(chunkstore.Pos{X: int32(i % 100), Y: int32(i / 100)}, got)
				if err != nil || !stored {
					errs <- fmt.Errorf("chunk %d: stored %v, %v", i, stored, err)
					return
				}
				want := pix(i)
				for j := range want {
					if got[j] != want[j] {
						errs <- errors.New("a chunk read back differs")
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fsys.mu.Lock()
	most := fsys.max
	fsys.mu.Unlock()
	if most > chunkstore.DefaultMaxOpenFiles+1 {
		t.Fatalf("%d files open at once, want at most %d data files and the store file", most, chunkstore.DefaultMaxOpenFiles)
	}
	if most < chunkstore.DefaultMaxOpenFiles/2 {
		t.Fatalf("only %d files open at once: the test read too little to prove the bound", most)
	}
}

func vfsData(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	names, err := fsys.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if n != "chunks.pxsw" {
			out = append(out, n)
		}
	}
	return out
}

// A data file whose descriptor was closed to stay within MaxOpenFiles is
// checked again when it opens again: one replaced meanwhile by another
// data file is damage, named, never read as the first.
func TestReopenedDataFileIsChecked(t *testing.T) {
	mem := vfs.NewMem()
	o := &chunkstore.Options{FS: mem, ChunkSize: 16, TileSize: 16, DataFileSize: 1024, BaseCache: -1, MaxOpenFiles: 2}
	s, err := chunkstore.Create("/chunks.pxsw", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	b := s.NewBatch()
	for x := range 4 {
		p := make([]uint32, 256)
		for j := range p {
			p[j] = r.Uint32() | 1
		}
		b.PutChunk(chunkstore.Pos{X: int32(x)}, p)
	}
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	dst := make([]uint32, 256)
	for x := range 4 { // file 1 is closed to open files 3 and 4
		if _, err := s.Get(chunkstore.Pos{X: int32(x)}, dst); err != nil {
			t.Fatal(err)
		}
	}
	f2, err := mem.Open("/chunks-data-2.pxsd")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := f2.Size()
	other := make([]byte, n)
	if _, err := f2.ReadAt(other, 0); err != nil {
		t.Fatal(err)
	}
	f2.Close()
	f1, err := mem.Create("/chunks-data-1.pxsd")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f1.WriteAt(other, 0); err != nil {
		t.Fatal(err)
	}
	f1.Close()
	_, err = s.Get(chunkstore.Pos{X: 0}, dst)
	if !errors.Is(err, chunkstore.ErrCorrupt) || !strings.Contains(err.Error(), "chunks-data-1.pxsd") {
		t.Fatalf("reading through a data file replaced while closed: %v, want ErrCorrupt naming it", err)
	}
}
