package vfs_test

import (
	"fmt"
	"testing"

	"github.com/arksave/arksave/vfs"
)

// TestCounting: every byte read or written through a file of a Counting
// file system is reported once, as a read or a write.
func TestCounting(t *testing.T) {
	var read, written int64
	c := vfs.Counting(vfs.NewMem(), func(n int64, write bool) {
		if write {
			written += n
		} else {
			read += n
		}
	})

	f, err := c.Create("/a")
	must(t, err)
	_, err = f.WriteAt(make([]byte, 100), 0)
	must(t, err)
	_, err = f.WriteAt(make([]byte, 20), 100)
	must(t, err)
	must(t, f.Close())
	f, err = c.OpenRW("/a")
	must(t, err)
	_, err = f.ReadAt(make([]byte, 50), 10)
	must(t, err)
	_, err = f.ReadAt(make([]byte, 50), 100) // 20 bytes remain
	expect(t, err != nil, "a read past the end succeeded")
	must(t, f.Close())
	f, err = c.Open("/a")
	must(t, err)
	_, err = f.ReadAt(make([]byte, 5), 0)
	must(t, err)
	must(t, f.Close())
	expect(t, written == 120 && read == 75, "counted %d written, %d read; want 120 and 75", written, read)
}

// ExampleCounting counts the bytes a write takes, as a progress bar would.
func ExampleCounting() {
	var written int64
	fsys := vfs.Counting(vfs.NewMem(), func(n int64, write bool) {
		if write {
			written += n
		}
	})

	if err := fsys.MkdirAll("/save"); err != nil {
		fmt.Println(err)
	}
	if err := vfs.WriteFileAtomic(fsys, "/save/world", make([]byte, 4096)); err != nil {
		fmt.Println(err)
	}
	fmt.Println(written, "bytes written")
	// Output: 4096 bytes written
}
