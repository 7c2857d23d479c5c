package chunkstore

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/arksave/arksave/internal/fsguard"
	"github.com/arksave/arksave/vfs"
)

// Data files. Their layout is part of the file format; see the package
// documentation.
const (
	dataMagic       = "PXSD" // bytes 0..3 of a data file
	dataHeaderSize  = 64     // a data file's header; its records start after it
	dataHeaderCRC   = 12     // CRC32-C of the header's other bytes
	fileShift       = 40     // a store offset is file<<40 | offset within that file
	localMask       = 1<<fileShift - 1
	minDataFileSize = 1 << 10
	maxDataFileSize = 1 << fileShift
	dataFileExt     = ".pxsd"
	storeExt        = ".pxsw"
)

// fileOf returns the number of the file a store offset is in: 0 for the
// store file itself, 1 and up for data files.
func fileOf(off int64) uint32 { return uint32(off >> fileShift) }

// localOf returns a store offset's offset within its file.
func localOf(off int64) int64 { return off & localMask }

// storeOffset returns the store offset of byte local of file n.
func storeOffset(n uint32, local int64) int64 { return int64(n)<<fileShift | local }

// firstRecord returns the offset within file n where its records start.
func firstRecord(n uint32) int64 {
	if n == 0 {
		return dataStart
	}
	return dataHeaderSize
}

// loc formats a store offset for messages: "offset 200" in the store
// file, "offset 200 of data file 3" in a data file.
type loc int64

func (l loc) String() string {
	if n := fileOf(int64(l)); n != 0 {
		return fmt.Sprintf("offset %d of data file %d", localOf(int64(l)), n)
	}
	return fmt.Sprintf("offset %d", int64(l))
}

// dataFileName returns the name of data file n of the store file named
// store: "chunks.pxsw" keeps its records in "chunks-data-1.pxsd",
// "chunks-data-2.pxsd" and so on, next to it. The name is a base name when
// store is one, else a path in store's directory.
func dataFileName(store string, n uint32) string {
	return strings.TrimSuffix(store, storeExt) + "-data-" + strconv.FormatUint(uint64(n), 10) + dataFileExt
}

// parseDataFileName splits the name of a data file into the name of its
// store file and its number: "chunks-7-data-3.pxsd" is data file 3 of
// "chunks-7.pxsw". The number is plain decimal without a leading zero,
// from 1 to MaxDataFiles; anything else is not a data file's name.
func parseDataFileName(name string) (store string, n uint32, ok bool) {
	rest, ok := strings.CutSuffix(name, dataFileExt)
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndex(rest, "-data-")
	if i <= 0 {
		return "", 0, false
	}
	num := rest[i+len("-data-"):]
	if num == "" || num[0] == '0' || len(num) > 7 {
		return "", 0, false
	}
	v, err := strconv.ParseUint(num, 10, 32)
	if err != nil || v < 1 || v > MaxDataFiles {
		return "", 0, false
	}
	return rest[:i] + storeExt, uint32(v), true
}

// dataHeader is a data file's header: which store and which file it is.
//
//	off size field
//	  0  4   magic "PXSD"
//	  4  2   format version (3; 2 in data files of format 2)
//	  6  2   flags (0)
//	  8  4   data file number
//	 12  4   CRC32-C of the header's other 60 bytes
//	 16  8   world seed
//	 24  8   creation time of the store, unix seconds
//	 32 32   reserved (0)
type dataHeader struct {
	n       uint32
	seed    uint64
	created int64
}

func (d dataHeader) marshal() [dataHeaderSize]byte {
	var out [dataHeaderSize]byte
	w := writeBuf(out[:])
	w.bytes([]byte(dataMagic))
	w.uint16(formatVersion)
	w.uint16(0)
	w.uint32(d.n)
	w.uint32(0) // checksum
	w.uint64(d.seed)
	w.uint64(uint64(d.created))
	c := dataHeaderChecksum(out[:])
	cw := writeBuf(out[dataHeaderCRC:])
	cw.uint32(c)
	return out
}

func dataHeaderChecksum(b []byte) uint32 {
	return headerChecksumAt(b[:dataHeaderSize], dataHeaderCRC)
}

// parseDataHeader checks the header of data file n and, when id is not
// nil, that it belongs to the store id describes.
func parseDataHeader(b []byte, n uint32, id *header) error {
	where := fmt.Sprintf("data file %d: header", n)
	if len(b) < dataHeaderSize {
		return fmt.Errorf("%w: %s: %d of %d bytes", ErrCorrupt, where, len(b), dataHeaderSize)
	}
	b = b[:dataHeaderSize]
	if string(b[:4]) != dataMagic {
		return fmt.Errorf("%w: %s: magic %q, want %q", ErrCorrupt, where, b[:4], dataMagic)
	}
	r := readBuf(b[4:])
	if v := r.uint16(); v < 2 || v > formatVersion {
		return fmt.Errorf("%w: %s: version %d, this package reads 2 to %d", ErrVersion, where, v, formatVersion)
	}
	cr := readBuf(b[dataHeaderCRC:])
	if c, stored := dataHeaderChecksum(b), cr.uint32(); c != stored {
		return fmt.Errorf("%w: %s: crc %08x != %08x", ErrChecksum, where, c, stored)
	}
	flags := r.uint16()
	num := r.uint32()
	r.skip(4)
	seed := r.uint64()
	created := int64(r.uint64())
	switch {
	case flags != 0:
		return fmt.Errorf("%w: %s: unknown flags %#04x", ErrVersion, where, flags)
	case !isZero(b[32:]):
		return fmt.Errorf("%w: %s: reserved bytes are not zero", ErrCorrupt, where)
	case num != n:
		return fmt.Errorf("%w: %s: it says it is data file %d", ErrCorrupt, where, num)
	case id != nil && (seed != id.seed || created != id.created):
		return fmt.Errorf("%w: %s: it belongs to another store (seed %d, created %d; the store has %d, %d)",
			ErrCorrupt, where, seed, created, id.seed, id.created)
	}
	return nil
}

// fileSet holds the open files of a store: the store file (number 0) and
// the data files, opened when first needed. It is safe for concurrent use.
type fileSet struct {
	fsys  vfs.FS
	path  string            // the store file
	rw    bool              // data files open read-write
	paths map[uint32]string // data files read from elsewhere (Options.dataPaths)

	mu    sync.Mutex
	open  map[uint32]vfs.File
	bad   map[uint32]error // why a data file cannot be used
	hdr   header           // the store's identity, for data file headers
	known bool             // hdr is set
}

func newFileSet(fsys vfs.FS, path string, main vfs.File, rw bool) *fileSet {
	return &fileSet{fsys: fsys, path: path, rw: rw, open: map[uint32]vfs.File{0: main}, bad: map[uint32]error{}}
}

// identify sets the store identity data file headers must carry.
func (fset *fileSet) identify(h header) {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	fset.hdr, fset.known = h, true
}

// name returns the path of file n.
func (fset *fileSet) name(n uint32) string {
	if n == 0 {
		return fset.path
	}
	if p, ok := fset.paths[n]; ok {
		return p
	}
	return dataFileName(fset.path, n)
}

// main returns the store file.
func (fset *fileSet) main() vfs.File {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	return fset.open[0]
}

// get returns open file n, opening it and checking its header the first
// time. A missing or damaged data file is an error wrapping ErrCorrupt that
// names it; the error is remembered. Any other error (the file could not
// be opened or read: I/O) is not damage and is not remembered: the next
// call tries again.
func (fset *fileSet) get(n uint32) (vfs.File, error) {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	if f, ok := fset.open[n]; ok {
		return f, nil
	}
	if err, ok := fset.bad[n]; ok {
		return nil, err
	}
	f, err := fset.openLocked(n)
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			fset.bad[n] = err
		}
		return nil, err
	}
	fset.open[n] = f
	return f, nil
}

func (fset *fileSet) openLocked(n uint32) (vfs.File, error) {
	p := fset.name(n)
	base := filepath.Base(p)
	if n > MaxDataFiles {
		return nil, fmt.Errorf("%w: data file %d is beyond the last (%d)", ErrCorrupt, n, MaxDataFiles)
	}
	f, err := openRegular(fset.fsys, p, fset.rw)
	if errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is missing", ErrCorrupt, base)
	}
	if err != nil {
		return nil, fmt.Errorf("chunkstore: open %s: %w", base, err)
	}
	var b [dataHeaderSize]byte
	if rerr := readFull(f, b[:], 0); rerr != nil {
		// A file too short for its header is damaged (readFull says so);
		// one that could not be read is not.
		f.Close()
		return nil, fmt.Errorf("chunkstore: %s: header: %w", base, rerr)
	}
	var id *header
	if fset.known {
		id = &fset.hdr
	}
	if herr := parseDataHeader(b[:], n, id); herr != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", base, herr)
	}
	return f, nil
}

// openRegular opens the file at p, read-write when rw is set, unless it
// is something other than a regular file: a symbolic link is never
// followed, a named pipe, device, socket or directory never opened (an
// error wrapping ErrCorrupt that names the file and says what it is).
func openRegular(fsys vfs.FS, p string, rw bool) (vfs.File, error) {
	if err := fsguard.Regular(fsys, p, filepath.Base(p), ErrCorrupt); err != nil {
		return nil, err
	}
	if rw {
		return fsys.OpenRW(p)
	}
	return fsys.Open(p)
}

// create makes data file n anew (truncating a leftover of that name),
// writes its header and keeps it open. The caller syncs it and the
// directory.
func (fset *fileSet) create(n uint32, h header) (vfs.File, error) {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	if f, ok := fset.open[n]; ok {
		f.Close()
		delete(fset.open, n)
	}
	delete(fset.bad, n)
	p := fset.name(n)
	if err := fsguard.Regular(fset.fsys, p, filepath.Base(p), ErrCorrupt); err != nil {
		return nil, fmt.Errorf("%w; not replaced", err)
	}
	f, err := fset.fsys.Create(p)
	if err != nil {
		return nil, err
	}
	hb := dataHeader{n: n, seed: h.seed, created: h.created}.marshal()
	if err := writeAll(f, hb[:], 0); err != nil {
		f.Close()
		return nil, err
	}
	fset.open[n] = f
	return f, nil
}

// remove closes and deletes data file n.
func (fset *fileSet) remove(n uint32) error {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	if n == 0 {
		return nil
	}
	if f, ok := fset.open[n]; ok {
		f.Close()
		delete(fset.open, n)
	}
	delete(fset.bad, n)
	err := fset.fsys.Remove(fset.name(n))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return err
}

// opened returns the numbers of the data files open now.
func (fset *fileSet) opened() []uint32 {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	var out []uint32
	for n := range fset.open {
		if n != 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// onDisk returns the numbers of the data files of the store found in its
// directory, ascending.
func (fset *fileSet) onDisk() []uint32 {
	return dataFilesOnDisk(fset.fsys, fset.path)
}

func dataFilesOnDisk(fsys vfs.FS, path string) []uint32 {
	names, _ := fsys.ReadDir(filepath.Dir(path))
	base := filepath.Base(path)
	var out []uint32
	for _, name := range names {
		if _, n, ok := parseDataFileName(name); ok && dataFileName(base, n) == name {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// closeAll closes every open file, the store file included.
func (fset *fileSet) closeAll() error {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	var first error
	for n, f := range fset.open {
		if err := f.Close(); err != nil && (first == nil || n == 0) {
			first = err
		}
	}
	fset.open = map[uint32]vfs.File{}
	return first
}
