package chunkstore

import (
	"cmp"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// Store is an open chunk store. Get, Bodies and Entries may
// be called from any goroutine, also while Commit or a compaction runs on
// another: they see the last committed generation or the new one, never a
// mix. Commit, the compactions and Close are serialised.
type Store struct {
	path string
	cfg  Options
	cc   chunkCodec
	axes int         // axes of a chunk key, fixed when the store was created
	aead cipher.AEAD // Options.Key's cipher; nil without a key

	wmu sync.Mutex // serialises writers

	// Guarded by mu; readers take it shared, a commit takes it exclusively
	// only to publish its result.
	mu     sync.RWMutex
	files  *fileSet // the store file (0) and the data files
	hdr    header
	chunks *index
	bodies *index
	space  rangeIndex       // for range queries: the spatial tree, built by the first one
	counts [Palette + 1]int // chunks by StorageType
	live   map[uint32]int64 // bytes of records the index references, per file, shared ones once
	ends   map[uint32]int64 // per file, the store offset where the last record the generation opened with ends
	closed bool

	// Writer state, guarded by wmu (written under mu too where readers see it).
	w              int64     // next append: a store offset in the newest data file
	ckpt           handle    // checkpoint the journal chain starts from; zero = none
	chain          []segment // journal segments after ckpt, oldest first
	journalEntries int       // entries in chain
	dict           dict
	needCheckpoint bool  // the next commit writes a checkpoint (after a rebuild or a generator change)
	needDirSync    bool  // a rename's directory sync failed: sync before the next commit
	readOnly       bool  // Commit and the compactions refused
	stale          error // set when Compact switched files but could not reopen
	minDead        int64 // dead bytes below which no compaction is due; 0 is minCompactionDead
	report         Report
	encoders       []*encoder
	reads          sync.Pool // *readScratch
}

// segment is a journal segment of the live chain.
type segment struct {
	h     handle
	level uint8
	count int
}

type readScratch struct{ rec, raw, plain []byte }

// Create makes a new, empty store at path, which must not exist, at
// generation 0, and syncs it and its directory. o must give ChunkSize; the
// fields that choose a generation are ignored. The store file holds the
// header slots; records go to data files next to it (see DataFileName),
// made as commits need them.
func Create(path string, o *Options) (*Store, error) {
	var cfg Options
	if o != nil {
		cfg = *o
	}
	cfg, err := cfg.withDefaults(true)
	if err != nil {
		return nil, err
	}
	if _, err := recordCipher(cfg.Key); err != nil {
		return nil, err
	}
	if _, err := cfg.FS.Stat(path); err == nil {
		return nil, fmt.Errorf("chunkstore: create %s: %w", path, fs.ErrExist)
	}
	f, err := cfg.FS.Create(path)
	if err != nil {
		return nil, fmt.Errorf("chunkstore: create %s: %w", path, err)
	}
	now := time.Now().Unix()
	h := header{
		flags: flagLZ4 | cryptFlags(cfg.Key), seed: cfg.Seed, created: now, modified: now,
		chunkSize: cfg.ChunkSize, tileSize: cfg.TileSize, pixelSize: createPixelSize(cfg.PixelSize),
		genVersion: cfg.generatorVersion(), axes: uint8(cfg.Axes),
	}
	slots := make([]byte, dataStart)
	hb := h.marshal()
	copy(slots, hb[:])
	err = writeAll(f, slots, 0)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = cfg.FS.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("chunkstore: create %s: %w", path, err)
	}
	files := newFileSet(cfg.FS, path, f, true)
	files.maxOpen = cfg.MaxOpenFiles
	s := newStore(path, cfg, files, h)
	s.w = storeOffset(1, dataHeaderSize)
	return s, nil
}

func newStore(path string, cfg Options, files *fileSet, h header) *Store {
	axes := h.keyAxes()
	s := &Store{path: path, cfg: cfg, axes: axes, files: files, hdr: h, chunks: newIndexAxes(0, axes), bodies: newIndexAxes(0, axes),
		dict: newDict(), live: map[uint32]int64{}, ends: map[uint32]int64{}}
	s.cfg.Axes = axes
	s.aead, _ = recordCipher(cfg.Key) // checked by Create and Open
	files.identify(h)
	s.cc = chunkCodec{
		npix: int(cfg.ChunkSize) * int(cfg.ChunkSize), mask: keptBits(cfg.Layers), seed: cfg.Seed,
		gen: cfg.Generator, threshold: cfg.DeltaThreshold, bases: newBaseCache(cfg.BaseCache), layers: cfg.Layers, deltaFull: cfg.Encoding == EncodeDeltaFull,
	}
	if kg, ok := cfg.Generator.(KeyGenerator); ok && axes > 2 {
		s.cc.kgen = kg
	}
	return s
}

// file returns open file n of the store (0: the store file).
func (s *Store) file(n uint32) (vfs.File, error) { return s.files.get(n) }

// read reads and checks the record at h, from whichever file holds it.
func (s *Store) read(h handle, buf []byte) (recordHeader, []byte, error) {
	f, err := s.files.get(h.File())
	if err != nil {
		return recordHeader{}, nil, err
	}
	return readRecord(f, h, buf)
}

// readAs is read of the record an index entry of storage type want
// points at: a record of another kind is ErrCorrupt (the entry or the
// record is damaged).
func (s *Store) readAs(h handle, want StorageType, buf []byte) (recordHeader, []byte, error) {
	rh, rec, err := s.read(h, buf)
	if err == nil && storageOf(rh.kind) != want {
		err = fmt.Errorf("%w: %s at %v where the index expects a %s record", ErrCorrupt, rh.kind, loc(h.Offset), want)
	}
	return rh, rec, err
}

// fileSize returns the size of file n.
func (s *Store) fileSize(n uint32) (int64, error) {
	f, err := s.files.get(n)
	if err != nil {
		return 0, err
	}
	return f.Size()
}

// Open opens the store at path: at its newest valid generation, or at the
// one that o.Generation or o.Root names, or for repair (o.Repair); see
// [Options]. A nil o is the zero Options.
//
// Open refuses a file whose chunk, tile or pixel size or seed differ from
// o's non-zero ones (ErrConfigMismatch), or that was written with another
// generator version (ErrGeneratorVersion, unless o.AllowGeneratorChange;
// not checked for inspection: read-only without a Generator, or Repair).
// When the newest valid header slot's page table is damaged, Open rebuilds
// the index by scanning the records before that generation's end;
// [Store.OpenReport] lists what it skipped.
func Open(path string, o *Options) (*Store, error) {
	var cfg Options
	if o != nil {
		cfg = *o
	}
	switch {
	case len(cfg.Root) > 0:
		h, err := parseRoot(cfg.Root)
		if err != nil {
			return nil, fmt.Errorf("chunkstore: open %s at a root: %w", path, err)
		}
		if cfg.Generation != 0 && cfg.Generation != h.generation {
			return nil, fmt.Errorf("%w: Generation %d and a Root of generation %d", ErrInvalidConfig, cfg.Generation, h.generation)
		}
		mode := openRoot
		if cfg.Repair {
			mode = openRootRepair
		}
		return openStoreRoot(path, cfg, mode, h.generation, &h)
	case cfg.Repair && cfg.Generation != 0:
		return nil, fmt.Errorf("%w: Repair opens the newest generation or a Root, not Generation %d", ErrInvalidConfig, cfg.Generation)
	case cfg.Repair:
		return openStore(path, cfg, openRepair, 0)
	case cfg.Generation != 0:
		return openStore(path, cfg, openAt, cfg.Generation)
	}
	return openStore(path, cfg, openNewest, 0)
}

type openMode uint8

const (
	openNewest openMode = iota
	openAt
	openRepair
	openCompacted // a file this package just wrote: the generator was checked when the source opened
	openRoot      // an explicit header from Store.Root
	openRootRepair
)

// Root returns the 64-byte description of the current generation (its
// header slot), for [Options.Root].
func (s *Store) Root() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	hb := s.hdr.marshal()
	return hb[:]
}

// parseRoot parses a root: a header slot of either parity.
func parseRoot(root []byte) (header, error) {
	h, err := parseHeader(root, 0)
	if err != nil && len(root) >= headerSize && !isZero(root[:headerSize]) {
		if h1, err1 := parseHeader(root, 1); err1 == nil {
			return h1, nil
		}
	}
	if errors.Is(err, errEmptySlot) {
		err = fmt.Errorf("%w: the root is all zero", ErrCorrupt)
	}
	return h, err
}

func openStore(path string, cfg Options, mode openMode, gen uint64) (*Store, error) {
	return openStoreRoot(path, cfg, mode, gen, nil)
}

func openStoreRoot(path string, cfg Options, mode openMode, gen uint64, root *header) (*Store, error) {
	cfg, err := cfg.withDefaults(false)
	if err != nil {
		return nil, err
	}
	if _, err := recordCipher(cfg.Key); err != nil {
		return nil, err
	}
	ro := cfg.ReadOnly || mode == openRepair || mode == openRootRepair
	f, err := openRegular(cfg.FS, path, !ro)
	if err != nil {
		return nil, fmt.Errorf("chunkstore: open %s: %w", path, err)
	}
	files := newFileSet(cfg.FS, path, f, !ro)
	files.maxOpen = cfg.MaxOpenFiles
	if cfg.dataPaths != nil {
		if !ro {
			files.closeAll()
			return nil, fmt.Errorf("chunkstore: open %s: data files read from other paths need ReadOnly or Repair", path)
		}
		files.paths = cfg.dataPaths.paths
	}
	s, err := load(files, path, cfg, mode, gen, root)
	if err != nil {
		files.closeAll()
		return nil, err
	}
	s.readOnly = ro
	return s, nil
}

// load reads the header slots, picks one and builds the index from its
// page table, or from a scan when that table is damaged.
func load(files *fileSet, path string, cfg Options, mode openMode, gen uint64, root *header) (*Store, error) {
	f := files.main()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("chunkstore: open %s: %w", path, err)
	}
	slots := make([]byte, min(size, dataStart))
	if n, err := f.ReadAt(slots, 0); n < len(slots) {
		return nil, fmt.Errorf("chunkstore: open %s: read header slots: %w", path, err)
	}
	var hdrs [slotCount]header
	var errs [slotCount]error
	var order []int
	for i := range slotCount {
		hdrs[i], errs[i] = parseHeader(slots[min(len(slots), i*headerSize):], i)
		if errs[i] == nil && (mode != openAt || hdrs[i].generation == gen) {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return -cmp.Compare(hdrs[a].generation, hdrs[b].generation) })
	if mode == openRoot || mode == openRootRepair {
		return loadRoot(files, path, cfg, *root, hdrs, errs, mode == openRootRepair)
	}
	if len(order) == 0 {
		switch mode {
		case openRepair:
			return loadWithoutHeader(files, path, cfg, errs)
		case openAt:
			return nil, fmt.Errorf("%w: generation %d in %s (slot A: %w; slot B: %w)", ErrGenerationNotFound, gen, path, errs[0], errs[1])
		}
		return nil, fmt.Errorf("%w: %s: slot A: %w; slot B: %w", ErrNoValidHeader, path, errs[0], errs[1])
	}
	h := hdrs[order[0]]
	if err := cfg.checkAgainst(h); err != nil {
		return nil, fmt.Errorf("chunkstore: open %s: %w", path, err)
	}
	s := newStore(path, cfg, files, h)
	for i := range slotCount {
		if errs[i] == nil {
			s.report.Slots++
		} else if !errors.Is(errs[i], errEmptySlot) {
			s.report.add(SectionHeader, int64(i)*headerSize, errs[i])
		}
	}
	end, err := s.loadChain(h)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		s.report.add(SectionTable, h.root, err)
		end = s.chainBound(h.root)
		if err := s.rebuild(end); err != nil {
			return nil, err
		}
	}
	w := end
	for i := range slotCount {
		if errs[i] == nil {
			w = max(w, s.slotEnd(hdrs[i]))
		}
	}
	s.w = s.appendPoint(w)
	if want := cfg.generatorVersion(); mode != openRepair && mode != openCompacted && !inspecting(cfg) && h.genVersion != want {
		if !cfg.AllowGeneratorChange {
			return nil, fmt.Errorf("chunkstore: open %s: %w: the file was written with generator version %d, the game has %d",
				path, ErrGeneratorVersion, h.genVersion, want)
		}
		s.dropDeltas(h.genVersion, want)
	}
	s.recount()
	s.checkFiles()
	return s, nil
}

// inspecting reports whether cfg opens a store for inspection (arksave
// check): read-only without a generator, every record read as stored, so
// no generator version needs to match.
func inspecting(cfg Options) bool { return cfg.ReadOnly && cfg.Generator == nil }

// loadRoot builds the store of an explicit root; see Options.Root and, with
// repair set, Options.Repair.
func loadRoot(files *fileSet, path string, cfg Options, h header, hdrs [slotCount]header, errs [slotCount]error, repair bool) (*Store, error) {
	if err := cfg.checkAgainst(h); err != nil {
		return nil, fmt.Errorf("chunkstore: open %s: %w", path, err)
	}
	if want := cfg.generatorVersion(); h.genVersion != want && !inspecting(cfg) && !repair {
		return nil, fmt.Errorf("chunkstore: open %s: %w: the root was written with generator version %d, the game has %d",
			path, ErrGeneratorVersion, h.genVersion, want)
	}
	s := newStore(path, cfg, files, h)
	end, err := s.loadChain(h)
	if err != nil {
		if !repair || !errors.Is(err, ErrCorrupt) {
			return nil, fmt.Errorf("chunkstore: open %s at the root of generation %d: %w", path, h.generation, err)
		}
		s.report.add(SectionTable, h.root, err)
		end = s.chainBound(h.root)
		if err := s.rebuild(end); err != nil {
			return nil, err
		}
	}
	w := end
	top := h.generation
	for i := range slotCount {
		if errs[i] == nil {
			s.report.Slots++
			w = max(w, s.slotEnd(hdrs[i]))
			top = max(top, hdrs[i].generation)
		} else if repair && !errors.Is(errs[i], errEmptySlot) {
			s.report.add(SectionHeader, int64(i)*headerSize, errs[i])
		}
	}
	s.w = s.appendPoint(w)
	s.hdr.generation = top
	s.recount()
	s.checkFiles()
	return s, nil
}

// loadWithoutHeader rebuilds a store whose header slots are both invalid
// from a scan of the whole store, for Options.Repair.
func loadWithoutHeader(files *fileSet, path string, cfg Options, errs [slotCount]error) (*Store, error) {
	if cfg.ChunkSize == 0 {
		return nil, fmt.Errorf("%w: %s: slot A: %w; slot B: %w (Config.ChunkSize is needed to rebuild without a header)",
			ErrNoValidHeader, path, errs[0], errs[1])
	}
	if cfg.PixelSize == 0 {
		cfg.PixelSize = pixelSize
	}
	h := header{flags: flagLZ4, seed: cfg.Seed, chunkSize: cfg.ChunkSize, tileSize: cfg.TileSize, pixelSize: cfg.PixelSize,
		genVersion: cfg.generatorVersion()}
	s := newStore(path, cfg, files, h)
	files.mu.Lock()
	files.known = false // the store's identity is lost with its slots
	files.mu.Unlock()
	for i := range slotCount {
		s.report.add(SectionHeader, int64(i)*headerSize, errs[i])
	}
	last := storeOffset(0, 0)
	if ns := files.onDisk(); len(ns) > 0 {
		last = storeOffset(ns[len(ns)-1], 0)
	}
	bound := s.fileEnd(fileOf(last))
	if err := s.rebuild(bound); err != nil {
		return nil, err
	}
	s.w = s.appendPoint(bound)
	s.recount()
	return s, nil
}

// fileEnd returns the store offset of the end of file n, its start when it
// cannot be read.
func (s *Store) fileEnd(n uint32) int64 {
	size, err := s.fileSize(n)
	if err != nil {
		return storeOffset(n, firstRecord(n))
	}
	return storeOffset(n, min(size, localMask))
}

// slotEnd returns where the data of a slot's generation ends: after its
// table root record. Nothing before it may be overwritten while the slot
// names that generation.
func (s *Store) slotEnd(h header) int64 {
	if h.root == 0 {
		return storeOffset(0, dataStart)
	}
	var b [recordHeaderSize]byte
	if f, err := s.file(fileOf(h.root)); err == nil {
		if n, _ := f.ReadAt(b[:], localOf(h.root)); n == len(b) {
			if rh, err := parseRecordHeader(b[:], h.root); err == nil {
				return h.root + int64(rh.length())
			}
		}
	}
	return h.root + recordHeaderSize
}

// appendPoint returns where the next commit appends, given w, the end of
// every generation a slot or the opened root names: there, in the newest
// data file, or at the start of the next data file when that file is gone
// or shorter than w (a save directory removes the data files of saves that
// did not commit). Records never go to the store file itself: the records
// of a format 1 store stay where they are.
func (s *Store) appendPoint(w int64) int64 {
	n := fileOf(w)
	switch {
	case n == 0:
		return storeOffset(1, dataHeaderSize)
	case localOf(w) <= dataHeaderSize:
		return storeOffset(n, dataHeaderSize)
	}
	if size, err := s.fileSize(n); err == nil && size >= localOf(w) {
		return w
	}
	return storeOffset(n+1, dataHeaderSize)
}

// chainBound returns where a scan that rebuilds a generation whose table is
// damaged stops: after its root record when that record's header is
// readable and within its file, else at the root (or the file's end).
func (s *Store) chainBound(root int64) int64 {
	if root == 0 {
		return storeOffset(0, min(s.fileEnd(0), dataStart))
	}
	end := s.fileEnd(fileOf(root))
	var b [recordHeaderSize]byte
	if f, err := s.file(fileOf(root)); err == nil {
		if n, _ := f.ReadAt(b[:], localOf(root)); n == len(b) {
			if rh, err := parseRecordHeader(b[:], root); err == nil && root+int64(rh.length()) <= end {
				return root + int64(rh.length())
			}
		}
	}
	return min(root, end)
}

// loadChain reads the page table of generation h: the root record, then
// each previous journal segment back to the checkpoint, and applies them
// oldest first. Any damage fails the whole chain with ErrCorrupt; the
// caller then rebuilds by scanning. It returns the generation's end.
func (s *Store) loadChain(h header) (int64, error) {
	if h.root == 0 {
		return storeOffset(0, dataStart), nil
	}
	type rec struct {
		h    handle
		kind recordKind
		t    table  // a journal segment's entries
		ckpt []byte // a checkpoint's payload, its entries applied from there
	}
	var recs []rec
	next := h.generation + 1
	var buf []byte
	for off := h.root; off != 0; {
		if len(recs) > 0 && off >= recs[len(recs)-1].h.Offset {
			return 0, fmt.Errorf("%w: table record at %v points forward to %v", ErrCorrupt, loc(recs[len(recs)-1].h.Offset), loc(off))
		}
		hdr, rb, err := s.readTableRecord(off, buf)
		if err != nil {
			return 0, err
		}
		buf = rb
		s.report.Tables++
		if hdr.key >= next {
			return 0, fmt.Errorf("%w: table record at %v: generation %d, expected below %d", ErrCorrupt, loc(off), hdr.key, next)
		}
		next = hdr.key
		if hdr.kind == pxsw.RecordCheckpoint {
			// The last record read: its buffer stays its own.
			prev, err := checkTableHeader(hdr.payload(rb), off, s.axes)
			if err != nil {
				return 0, err
			}
			if prev != 0 {
				return 0, fmt.Errorf("%w: checkpoint at %v has a previous record %v", ErrCorrupt, loc(off), loc(prev))
			}
			recs = append(recs, rec{h: handle{Offset: off, Length: hdr.length()}, kind: hdr.kind, ckpt: hdr.payload(rb)})
			break
		}
		t, _, err := parseTable(hdr.payload(rb), off, false, s.axes)
		if err != nil {
			return 0, err
		}
		recs = append(recs, rec{h: handle{Offset: off, Length: hdr.length()}, kind: hdr.kind, t: t})
		off = t.prev
	}
	ahead := func(e tableEntry, r rec) error {
		if !e.deleted && e.typ != Empty && e.h.End() > r.h.Offset {
			return fmt.Errorf("%w: page-table entry for %v in the record at %v points ahead to {%d, %d}",
				ErrCorrupt, e.pos, loc(r.h.Offset), e.h.Offset, e.h.Length)
		}
		return nil
	}
	for _, r := range recs {
		for _, e := range r.t.entries {
			if err := ahead(e, r); err != nil {
				return 0, err
			}
		}
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.kind == pxsw.RecordCheckpoint {
			s.ckpt = r.h
			if err := s.applyCheckpoint(r.ckpt, r.h.Offset, func(e tableEntry) error { return ahead(e, r) }); err != nil {
				return 0, err
			}
			continue
		}
		s.chain = append(s.chain, segment{h: r.h, level: r.t.level, count: len(r.t.entries)})
		s.journalEntries += len(r.t.entries)
		s.applyLoaded(r.t.entries)
	}
	return h.root + int64(recs[0].h.Length), nil
}

// checkTableHeader checks the header of a table record's payload read at
// off in a store of axes axes: its count against its length. It returns
// the previous record's offset.
func checkTableHeader(payload []byte, off int64, axes int) (int64, error) {
	size := entrySizeOf(axes)
	if len(payload) < tableHeaderSize || (len(payload)-tableHeaderSize)%size != 0 {
		return 0, fmt.Errorf("%w: table record at %v: payload of %d bytes is not 16 + %dn", ErrCorrupt, loc(off), len(payload), size)
	}
	r := readBuf(payload)
	prev := int64(r.uint64())
	r.skip(4)
	if count, n := int(r.uint32()), (len(payload)-tableHeaderSize)/size; count != n {
		return 0, fmt.Errorf("%w: table record at %v: count %d, room for %d", ErrCorrupt, loc(off), count, n)
	}
	return prev, nil
}

// applyCheckpoint fills the index, empty before, from the entries of a
// checkpoint's payload read at off, each checked (parseEntry, then check);
// an error leaves the index half filled (the caller rebuilds). Entries are
// in page-table order, their slots in the index at random: inserting them
// as they come would miss the cache once per entry in a table of hundreds
// of megabytes. So a first pass checks them and counts them per bucket of
// the index (4,096 buckets, each a stretch of adjacent slots), a second
// copies them into an array grouped by bucket, in file order within each
// (the later entry for a position still wins), and the inserts then walk
// the table bucket by bucket, each one small enough for the CPU's cache.
// Every pass reads or writes memory in order.
func (s *Store) applyCheckpoint(payload []byte, off int64, check func(tableEntry) error) error {
	size := entrySizeOf(s.axes)
	n := (len(payload) - tableHeaderSize) / size
	if n > s.chunks.Len() {
		s.chunks = newIndexAxes(n, s.axes) // the checkpoint is the oldest record: size the index once
	}
	ix := s.chunks
	const bucketBits = 12
	shift := max(0, bits.Len(uint(len(ix.slots)))-1-bucketBits)
	count := make([]int, 1<<bucketBits+1)
	base := off + recordHeaderSize + tableHeaderSize
	at := func(i int) []byte { return payload[tableHeaderSize+i*size : tableHeaderSize+(i+1)*size] }
	for i := range n {
		e, err := parseEntry(at(i), base+int64(i*size), s.axes)
		if err == nil {
			err = check(e)
		}
		if err != nil {
			return err
		}
		count[ix.home(e.pos.ik())>>shift+1]++
	}
	for b := 1; b < len(count); b++ {
		count[b] += count[b-1]
	}
	sorted := make([]tableEntry, n)
	for i := range n {
		e, _ := parseEntry(at(i), 0, s.axes) // checked above
		b := ix.home(e.pos.ik()) >> shift
		sorted[count[b]] = e
		count[b]++
	}
	s.applyLoaded(sorted)
	return nil
}

// readTableRecord reads and checks the table record at off.
func (s *Store) readTableRecord(off int64, buf []byte) (recordHeader, []byte, error) {
	if !validOffset(off) {
		return recordHeader{}, nil, fmt.Errorf("%w: table record at %v: not in a data region", ErrCorrupt, loc(off))
	}
	f, err := s.file(fileOf(off))
	if err != nil {
		return recordHeader{}, nil, err
	}
	size, err := f.Size()
	if err != nil {
		return recordHeader{}, nil, fmt.Errorf("chunkstore: read table record at %v: %w", loc(off), err)
	}
	local := localOf(off)
	if local+recordHeaderSize > size {
		return recordHeader{}, nil, fmt.Errorf("%w: table record at %v: beyond the file's %d bytes: %w", ErrCorrupt, loc(off), size, io.ErrUnexpectedEOF)
	}
	var hb [recordHeaderSize]byte
	if err := readFull(f, hb[:], off); err != nil {
		return recordHeader{}, nil, err
	}
	hdr, err := parseRecordHeader(hb[:], off)
	if err != nil {
		return hdr, nil, err
	}
	if !hdr.kind.IsTable() {
		return hdr, nil, fmt.Errorf("%w: record at %v: %s where a table record belongs", ErrCorrupt, loc(off), hdr.kind)
	}
	if local+int64(hdr.length()) > size {
		return hdr, nil, fmt.Errorf("%w: %s at %v: %d bytes, the file ends after %d: %w", ErrCorrupt, hdr.kind, loc(off), hdr.length(), size-local, io.ErrUnexpectedEOF)
	}
	return readRecord(f, handle{Offset: off, Length: hdr.length()}, buf)
}

// applyLoaded applies table entries to the index while opening.
func (s *Store) applyLoaded(entries []tableEntry) {
	for _, e := range entries {
		ix := s.chunks
		if e.isBody() {
			ix = s.bodies
		}
		if e.deleted {
			ix.del(e.pos.ik())
		} else {
			ix.set(e.pos.ik(), ival{h: e.h, typ: e.typ})
		}
	}
}

// dropDeltas removes every Delta chunk after a generator change.
func (s *Store) dropDeltas(from, to uint32) {
	var lost []ikey
	s.chunks.each(func(k ikey, v ival) bool {
		if v.typ == Delta {
			lost = append(lost, k)
		}
		return true
	})
	for _, k := range lost {
		v, _ := s.chunks.del(k)
		s.report.addKey(SectionChunk, v.h.Offset, keyOf(k, s.axes),
			fmt.Errorf("%w: delta chunk dropped: generator version %d, now %d", ErrGeneratorVersion, from, to))
	}
	if len(lost) > 0 || from != to {
		s.needCheckpoint = true
	}
}

// recount derives the counters, the live bytes and the dictionary's
// reference counts from the index: a record that several entries share
// is counted once, and the dictionary learns it. Its cost is linear in the
// entries (a radix sort of their record offsets finds the shared ones), so
// that opening costs the same per chunk at any size.
func (s *Store) recount() {
	s.counts = [Palette + 1]int{}
	s.live = map[uint32]int64{}
	s.ends = map[uint32]int64{}
	s.dict = newDict()
	offs := make([]uint64, 0, s.chunks.Len()+s.bodies.Len())
	type fileSum struct{ live, end int64 }
	var first [64]fileSum // the first data files, without a map access per entry
	collect := func(body bool) func(ikey, ival) bool {
		return func(_ ikey, v ival) bool {
			if !body {
				s.counts[v.typ]++
			}
			if !v.h.IsZero() {
				offs = append(offs, uint64(v.h.Offset))
				if n := v.h.File(); n < uint32(len(first)) {
					first[n].live += int64(v.h.Length)
					first[n].end = max(first[n].end, v.h.End())
				} else {
					s.live[n] += int64(v.h.Length)
					s.ends[n] = max(s.ends[n], v.h.End())
				}
			}
			return true
		}
	}
	s.chunks.each(collect(false))
	s.bodies.each(collect(true))
	for n, f := range first {
		if f.live > 0 {
			s.live[uint32(n)], s.ends[uint32(n)] = f.live, f.end
		}
	}
	offs = radixSort(offs)
	// Records several entries share: count them once, and track them.
	shared := map[int64][]tkey{}
	for i := 1; i < len(offs); i++ {
		if offs[i] == offs[i-1] {
			shared[int64(offs[i])] = nil
		}
	}
	if len(shared) > 0 {
		handles := map[int64]handle{}
		group := func(body bool) func(ikey, ival) bool {
			return func(k ikey, v ival) bool {
				if ks, ok := shared[v.h.Offset]; ok && !v.h.IsZero() {
					shared[v.h.Offset] = append(ks, tkey{k, body})
					handles[v.h.Offset] = v.h
				}
				return true
			}
		}
		s.chunks.each(group(false))
		s.bodies.each(group(true))
		at := make([]int64, 0, len(shared))
		for off := range shared {
			at = append(at, off)
		}
		slices.Sort(at)
		var buf []byte
		for _, off := range at {
			h, keys := handles[off], shared[off]
			s.live[h.File()] -= int64(h.Length) * int64(len(keys)-1)
			var hash uint64
			if _, rec, err := s.read(h, buf); err == nil {
				hash = s.dict.hash(rec)
				buf = rec
			}
			s.dict.track(h, hash, keys, hash != 0)
		}
	}
	for n, l := range s.live {
		if l <= 0 {
			delete(s.live, n)
		}
	}
	for _, t := range append([]handle{s.ckpt}, s.chainHandles()...) {
		if !t.IsZero() {
			s.ends[t.File()] = max(s.ends[t.File()], t.End())
		}
	}
	s.hdr.chunkCount = uint32(s.chunks.Len())
}

// radixSort sorts v (in place or into a new slice, which it returns):
// least significant 16 bits first, passes whose digit is the same in every
// value skipped.
func radixSort(v []uint64) []uint64 {
	if len(v) < radixMin {
		slices.Sort(v)
		return v
	}
	return radixSortFrom(v, 0)
}

// radixMin is the length below which a comparison sort is faster.
const radixMin = 1 << 14

// radixSortFrom sorts v by its bits from bit from up (a multiple of 16),
// stably: values equal there keep their order.
func radixSortFrom(v []uint64, from uint) []uint64 {
	if len(v) < radixMin {
		slices.SortStableFunc(v, func(a, b uint64) int { return cmp.Compare(a>>from, b>>from) })
		return v
	}
	tmp := make([]uint64, len(v))
	count := make([]int, 1<<16)
	for shift := from; shift < 64; shift += 16 {
		clear(count)
		for _, x := range v {
			count[(x>>shift)&0xFFFF]++
		}
		if count[(v[0]>>shift)&0xFFFF] == len(v) {
			continue // one digit: nothing to move
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, x := range v {
			d := (x >> shift) & 0xFFFF
			tmp[count[d]] = x
			count[d]++
		}
		v, tmp = tmp, v
	}
	return v
}

func (s *Store) chainHandles() []handle {
	hs := make([]handle, len(s.chain))
	for i, sg := range s.chain {
		hs[i] = sg.h
	}
	return hs
}

// checkFiles lists in the open report the files of the generation that are
// missing, cut short or not the store's.
func (s *Store) checkFiles() {
	var r Report
	s.checkFilesInto(&r, s.fileList())
	s.report.Problems = append(s.report.Problems, r.Problems...)
}

// writeAll writes p at off; a short write is an error.
func writeAll(f vfs.File, p []byte, off int64) error {
	n, err := f.WriteAt(p, off)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

// Generation returns the committed generation the store is at.
func (s *Store) Generation() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hdr.generation
}

// Options returns the store's options with defaults filled in and the
// file's values adopted: the game's constants, the world seed and the axes
// of the chunk keys as the header records them.
func (s *Store) Options() Options { return s.cfg }

// GeneratorVersion returns the generator version recorded for the
// store's committed generation.
func (s *Store) GeneratorVersion() uint32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hdr.genVersion
}

// OpenReport lists what opening the store skipped or dropped: damaged
// header slots, a damaged page table (and what the rebuilding scan
// skipped), delta chunks dropped after a generator change.
func (s *Store) OpenReport() Report {
	s.mu.RLock()
	r := s.report
	r.Problems = slices.Clone(r.Problems)
	s.mu.RUnlock()
	return s.localize(r)
}

// Close closes the file. Batches not committed are not written.
func (s *Store) Close() error { return s.close(nil) }

// close runs last, when not nil, on the open file, then closes it; it
// returns last's error first.
func (s *Store) close(last func() error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	var err error
	if last != nil {
		err = last()
	}
	s.closed = true
	if cerr := s.files.closeAll(); err == nil {
		err = cerr
	}
	return err
}
