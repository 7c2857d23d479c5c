package jetstream_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/vfs"
)

// The file operations of a save directory, across block boundaries, seen
// by the holder and by another program.
func TestFileOperations(t *testing.T) {
	s := startServer(t)
	a := connectFS(t, s.ClientURL(), jetstream.Options{BlockSize: 512})
	b := connectFS(t, s.ClientURL(), jetstream.Options{})

	_, err := a.Create("w/x")
	expect(t, errors.Is(err, fs.ErrPermission), "create without the lock: %v", err)
	must(t, a.MkdirAll("w"))
	lock, err := a.Lock("w/lock")
	must(t, err)
	_, err = b.Lock("w/lock")
	expect(t, errors.Is(err, vfs.ErrLocked), "second lock: %v", err)

	f, err := a.Create("w/data")
	must(t, err)
	data := make([]byte, 1500)
	for i := range data {
		data[i] = byte(i * 7)
	}
	_, err = f.WriteAt(data[:1000], 0)
	must(t, err)
	must(t, f.Sync())
	_, err = f.WriteAt(data[1000:], 1000)
	must(t, err)
	_, err = f.WriteAt([]byte("HEADER"), 0)
	must(t, err)
	copy(data, "HEADER")
	must(t, f.Sync())
	must(t, a.SyncDir("w"))

	read := func(fsys vfs.FS, name string) []byte {
		t.Helper()
		data, err := vfs.ReadFile(fsys, name)
		must(t, err)
		return data
	}
	expect(t, bytes.Equal(read(b, "w/data"), data), "another program reads other bytes")
	expect(t, bytes.Equal(read(a, "w/data"), data), "the holder reads other bytes")

	must(t, f.Truncate(700))
	must(t, f.Sync())
	expect(t, bytes.Equal(read(b, "w/data"), data[:700]), "after truncate: other bytes")
	_, err = f.WriteAt([]byte("tail"), 900)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
	want := append(append(slices.Clone(data[:700]), make([]byte, 200)...), "tail"...)
	expect(t, bytes.Equal(read(b, "w/data"), want), "a write past the end leaves zeros between")

	must(t, a.MkdirAll("w/backups"))
	must(t, vfs.WriteFileAtomic(a, "w/backups/m", []byte("manifest")))
	must(t, a.Rename("w/data", "w/backups/data"))
	names, err := b.ReadDir("w")
	must(t, err)
	expect(t, slices.Equal(names, []string{"backups"}), "names: %v", names)
	names, err = b.ReadDir("w/backups")
	must(t, err)
	expect(t, slices.Equal(names, []string{"data", "m"}), "backups: %v", names)
	st, err := b.Stat("w/backups/data")
	must(t, err)
	expect(t, st.Size() == int64(len(want)) && !st.IsDir(), "stat: %v %v", st.Size(), st.IsDir())
	must(t, a.Remove("w/backups/data"))
	must(t, a.SyncDir("w"))
	_, err = b.Open("w/backups/data")
	expect(t, errors.Is(err, fs.ErrNotExist), "removed file opens: %v", err)

	holder, err := vfs.ReadFile(b, "w/lock")
	must(t, err)
	expect(t, bytes.Contains(holder, []byte(`"pid"`)), "lock names no holder: %s", holder)
	must(t, lock.Close())
	l2, err := b.Lock("w/lock")
	must(t, err)
	must(t, l2.Close())

	rf, err := b.Open("w/backups/m")
	must(t, err)
	buf := make([]byte, 20)
	n, err := rf.ReadAt(buf, 0)
	expect(t, n == 8 && errors.Is(err, io.EOF) && string(buf[:n]) == "manifest", "read %q %v", buf[:n], err)
	must(t, rf.Close())
}

// A file of more blocks than the FS lets be on their way at once is
// stored whole by one Sync, which waits for acknowledgements to catch up
// as it goes; the lease is renewed meanwhile.
func TestSyncLongerThanThePipeline(t *testing.T) {
	s := startServer(t)
	a := connectFS(t, s.ClientURL(), jetstream.Options{BlockSize: 512, LeaseTTL: time.Second})
	must(t, a.MkdirAll("w"))
	lock, err := a.Lock("w/lock")
	must(t, err)
	defer lock.Close()
	data := make([]byte, 2000*512+100) // 2001 blocks
	for i := range data {
		data[i] = byte(i * 31 / 7)
	}
	f, err := a.Create("w/big")
	must(t, err)
	_, err = f.WriteAt(data, 0)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
	got, err := vfs.ReadFile(connectFS(t, s.ClientURL(), jetstream.Options{}), "w/big")
	must(t, err)
	expect(t, bytes.Equal(got, data), "another program reads %d other bytes", len(got))
}
