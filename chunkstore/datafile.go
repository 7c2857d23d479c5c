package chunkstore

import (
	"container/list"
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

// fileSet holds the files of a store: the store file (number 0), always
// open, and the data files, opened when first needed. At most maxOpen data
// files are open at once: the least recently used one not in use (and with
// no write since its last sync) is closed when another must open, and opened
// again, its header checked again, on its next use. It is safe for
// concurrent use.
type fileSet struct {
	fsys  vfs.FS
	path  string            // the store file
	rw    bool              // data files open read-write
	paths map[uint32]string // data files read from elsewhere (Options.dataPaths)

	mu      sync.Mutex
	open    map[uint32]vfs.File // 0: the store file; others: *pooledFile
	bad     map[uint32]error    // why a data file cannot be used
	hdr     header              // the store's identity, for data file headers
	known   bool                // hdr is set
	maxOpen int                 // data files open at most (Options.MaxOpenFiles)
	nopen   int                 // data files open now
	idle    *list.List          // open data files nobody uses, least recently used first
}

func newFileSet(fsys vfs.FS, path string, main vfs.File, rw bool) *fileSet {
	return &fileSet{fsys: fsys, path: path, rw: rw, open: map[uint32]vfs.File{0: main}, bad: map[uint32]error{}, maxOpen: DefaultMaxOpenFiles, idle: list.New()}
}

// pooledFile is a data file of a fileSet: its descriptor may be closed
// while no call uses it, and is opened again by the next call.
type pooledFile struct {
	set   *fileSet
	n     uint32
	f     vfs.File      // nil while closed; guarded by set.mu, as the rest
	users int           // calls using f now
	dirty bool          // written since its last sync: stays open
	idle  *list.Element // in set.idle while open, unused and clean
}

// acquire returns the open descriptor, opening it (and closing the least
// recently used idle one over the bound) when it is closed.
func (p *pooledFile) acquire() (vfs.File, error) {
	fset := p.set
	fset.mu.Lock()
	defer fset.mu.Unlock()
	if p.f == nil {
		fset.evictLocked(fset.maxOpen - 1)
		f, err := fset.openLocked(p.n)
		if err != nil {
			if errors.Is(err, ErrCorrupt) {
				fset.bad[p.n] = err
			}
			return nil, err
		}
		p.f = f
		fset.nopen++
	}
	fset.busyLocked(p)
	p.users++
	return p.f, nil
}

func (p *pooledFile) release(wrote, synced bool) {
	fset := p.set
	fset.mu.Lock()
	defer fset.mu.Unlock()
	p.users--
	if wrote {
		p.dirty = true
	}
	if synced {
		p.dirty = false
	}
	if p.users == 0 && !p.dirty && p.f != nil {
		p.idle = fset.idle.PushBack(p) // the most recently used
	}
	// Files kept open past the bound while written close once synced.
	fset.evictLocked(fset.maxOpen)
}

// busyLocked takes p off the idle list.
func (fset *fileSet) busyLocked(p *pooledFile) {
	if p.idle != nil {
		fset.idle.Remove(p.idle)
		p.idle = nil
	}
}

// evictLocked closes idle data files, least recently used first, until at
// most limit are open. Files in use or written since their last sync stay
// open (the bound is then passed for a while).
func (fset *fileSet) evictLocked(limit int) {
	for fset.nopen > limit && fset.idle.Len() > 0 {
		p := fset.idle.Front().Value.(*pooledFile)
		p.closeLocked()
	}
}

func (p *pooledFile) ReadAt(b []byte, off int64) (int, error) {
	f, err := p.acquire()
	if err != nil {
		return 0, err
	}
	defer p.release(false, false)
	return f.ReadAt(b, off)
}

func (p *pooledFile) WriteAt(b []byte, off int64) (int, error) {
	f, err := p.acquire()
	if err != nil {
		return 0, err
	}
	defer p.release(true, false)
	return f.WriteAt(b, off)
}

func (p *pooledFile) Sync() error {
	f, err := p.acquire()
	if err != nil {
		return err
	}
	err = f.Sync()
	p.release(false, err == nil)
	return err
}

func (p *pooledFile) Truncate(size int64) error {
	f, err := p.acquire()
	if err != nil {
		return err
	}
	defer p.release(true, false)
	return f.Truncate(size)
}

func (p *pooledFile) Size() (int64, error) {
	f, err := p.acquire()
	if err != nil {
		return 0, err
	}
	defer p.release(false, false)
	return f.Size()
}

func (p *pooledFile) Name() string { return p.set.name(p.n) }

// Close closes the descriptor; the next call opens it again.
func (p *pooledFile) Close() error {
	p.set.mu.Lock()
	defer p.set.mu.Unlock()
	return p.closeLocked()
}

func (p *pooledFile) closeLocked() error {
	p.set.busyLocked(p)
	if p.f == nil {
		return nil
	}
	err := p.f.Close()
	p.f = nil
	p.set.nopen--
	return err
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
	if f, ok := fset.open[n]; ok {
		fset.mu.Unlock()
		return f, nil
	}
	if err, ok := fset.bad[n]; ok {
		fset.mu.Unlock()
		return nil, err
	}
	p := &pooledFile{set: fset, n: n}
	fset.open[n] = p
	fset.mu.Unlock()
	// Open it now, so that a missing or damaged file is known at once.
	if _, err := p.acquire(); err != nil {
		fset.mu.Lock()
		if fset.open[n] == p {
			delete(fset.open, n)
		}
		fset.mu.Unlock()
		return nil, err
	}
	p.release(false, false)
	return p, nil
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
	fset.forgetLocked(n)
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
	fset.evictLocked(fset.maxOpen - 1)
	pf := &pooledFile{set: fset, n: n, f: f, dirty: true}
	fset.nopen++
	fset.open[n] = pf
	return pf, nil
}

// forgetLocked closes data file n and forgets it.
func (fset *fileSet) forgetLocked(n uint32) {
	if f, ok := fset.open[n]; ok {
		if p, ok := f.(*pooledFile); ok {
			p.closeLocked()
		} else {
			f.Close()
		}
		delete(fset.open, n)
	}
}

// remove closes and deletes data file n.
func (fset *fileSet) remove(n uint32) error {
	fset.mu.Lock()
	defer fset.mu.Unlock()
	if n == 0 {
		return nil
	}
	fset.forgetLocked(n)
	delete(fset.bad, n)
	err := fset.fsys.Remove(fset.name(n))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return err
}

// opened returns the numbers of the data files the set knows (opened once,
// whether their descriptors are open now or not).
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
		var err error
		if p, ok := f.(*pooledFile); ok {
			err = p.closeLocked()
		} else if f != nil {
			err = f.Close()
		}
		if err != nil && (first == nil || n == 0) {
			first = err
		}
	}
	fset.open = map[uint32]vfs.File{}
	return first
}
