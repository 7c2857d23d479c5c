package savedir

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// Mirrors. Every file of the top level that generations share is copied
// once into backups/ (MirrorName), grown after each commit by what the
// committed generation uses of it: the data files of its chunk store
// (append-only; a sealed one is copied once in its life), its players data
// file (append-only), its players index (written once) and the store
// file's header slots (128 bytes). The copy of an append-only file holds
// the same bytes at the same offsets as the file, up to what a committed
// generation used of it when it was last grown; never what a save that did
// not commit appended. A load that finds a file of a generation damaged
// verifies the generation again with the mirrors in its place
// (mirrorCandidate) before it falls back to an older generation.

// mirrorChunk is how much of a file a mirror copies at a time.
const mirrorChunk = 1 << 20

// mirrorHeadCheck is how many of its first bytes a mirror must share with
// its file to be grown: a mirror of an earlier file of that name (a
// repair replaced it) is started again.
const mirrorHeadCheck = 64

// mirror grows the mirrors of the files generation m (the committed one)
// uses to what m uses of them, players being m's players index (nil
// without players). Each record is checked as it is copied: one that does
// not check out is not copied, and the mirror of its file stops before it
// (the error names it; arksave check and repair see the file). Files of a
// backup's own copies, and stores whose manifests predate data files, get
// no mirror. It returns the bytes written.
func (d *Dir) mirror(m *Manifest, players *Players) (int64, error) {
	if m == nil || m.Version < manifestVersionData || strings.Contains(m.Chunks.Name, "/") {
		return 0, nil
	}
	if err := d.fs.MkdirAll(filepath.Join(d.path, BackupDir)); err != nil {
		return 0, fmt.Errorf("autosave: mirror: create %s/: %w", BackupDir, err)
	}
	var mr mirrorRun
	mr.whole(d, m.Chunks.Name, d.storeSlots)
	table := int64(-1)
	if ri, err := storetool.Tool.ParseRoot(m.Chunks.Root); err == nil {
		table = ri.Table
	}
	for _, name := range m.Chunks.Data {
		mr.add(d.mirrorDataFile(name, table))
	}
	if p := m.Players; p != nil && players != nil && !isCopiedPlayers(p) {
		mr.whole(d, p.Index.Name, func(string) ([]byte, error) { return d.readRef(p.Index) })
		mr.add(d.mirrorPlayersData(p.Data, players))
	}
	if mr.created {
		if err := d.fs.SyncDir(filepath.Join(d.path, BackupDir)); err != nil {
			mr.errs = append(mr.errs, fmt.Errorf("autosave: mirror: sync %s/: %w", BackupDir, err))
		}
	}
	return mr.bytes, errors.Join(mr.errs...)
}

// mirrorRun adds up what the mirrors of one commit did.
type mirrorRun struct {
	bytes   int64
	created bool
	errs    []error
}

func (mr *mirrorRun) add(n int64, created bool, err error) {
	mr.bytes += n
	mr.created = mr.created || created
	if err != nil {
		mr.errs = append(mr.errs, err)
	}
}

// whole mirrors a file that is written whole, never grown (a players
// index, the store file's header slots): read returns its bytes as they
// were verified (nil: the file has no mirror), and the mirror is written
// again when it differs.
func (mr *mirrorRun) whole(d *Dir, name string, read func(name string) ([]byte, error)) {
	data, err := read(name)
	if err != nil || data == nil {
		mr.add(0, false, err)
		return
	}
	rel := MirrorName(name)
	p, err := d.file(rel)
	if err != nil {
		mr.add(0, false, err)
		return
	}
	_, serr := d.fs.Lstat(p)
	if old, err := vfs.ReadFileLimit(d.fs, p, int64(len(data))); err == nil && bytes.Equal(old, data) {
		return
	}
	if err := d.writeSynced(rel, data); err != nil {
		mr.add(0, false, fmt.Errorf("autosave: mirror %s: %w", name, err))
		return
	}
	mr.add(int64(len(data)), errors.Is(serr, fs.ErrNotExist), nil)
}

// storeSlots returns the store file name's bytes when it holds only its
// header slots (a store of format 2 and later), nil otherwise: a store of
// format 1 keeps its records in the store file, and gets no mirror.
func (d *Dir) storeSlots(name string) ([]byte, error) {
	p, err := d.file(name)
	if err != nil {
		return nil, err
	}
	data, err := vfs.ReadFileLimit(d.fs, p, pxsw.SlotsSize+1)
	if err != nil || len(data) != pxsw.SlotsSize {
		return nil, nil // a store of format 1, or damaged: a load reports it
	}
	return data, nil
}

// openMirror opens the mirror of file name for growing it: its size, or
// 0 when it was missing (created is set then) or must start again (longer
// than size, the file's, or its first bytes differ from head's).
func (d *Dir) openMirror(name string, size int64, head []byte) (f vfs.File, have int64, created bool, err error) {
	p, err := d.file(MirrorName(name))
	if err != nil {
		return nil, 0, false, err
	}
	if _, err := d.fs.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		f, err = d.fs.Create(p)
		return f, 0, true, err
	}
	if f, err = d.fs.OpenRW(p); err != nil {
		return nil, 0, false, err
	}
	if have, err = f.Size(); err != nil {
		f.Close()
		return nil, 0, false, err
	}
	n := min(have, int64(len(head)))
	got := make([]byte, n)
	if _, err := f.ReadAt(got, 0); err != nil || have > size || !bytes.Equal(got, head[:n]) {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, 0, false, err
		}
		have = 0
	}
	return f, have, false, nil
}

// liveFile opens file name of the top level for reading: the file, its
// size and its first bytes (up to mirrorHeadCheck).
func (d *Dir) liveFile(name string) (vfs.File, int64, []byte, error) {
	p, err := d.file(name)
	if err != nil {
		return nil, 0, nil, err
	}
	f, err := d.fs.Open(p)
	if err != nil {
		return nil, 0, nil, err
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	head := make([]byte, min(size, mirrorHeadCheck))
	if _, err := f.ReadAt(head, 0); err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	return f, size, head, nil
}

// grow copies the bytes [from, to) of src to the end of mirror dst, which
// holds from bytes, and syncs it.
func growMirror(src, dst vfs.File, from, to int64) error {
	buf := make([]byte, min(to-from, mirrorChunk))
	for off := from; off < to; {
		b := buf[:min(to-off, int64(len(buf)))]
		if _, err := src.ReadAt(b, off); err != nil {
			return err
		}
		if _, err := dst.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return dst.Sync()
}

// mirrorDataFile grows the mirror of data file name up to what the
// committed generation uses of it: its last record when table (the store
// offset of the generation's page table) is not in it, else the page
// table record. It returns the bytes written and whether it created the
// mirror.
func (d *Dir) mirrorDataFile(name string, table int64) (int64, bool, error) {
	fail := func(created bool, err error) (int64, bool, error) {
		return 0, created, fmt.Errorf("autosave: mirror %s: %w", name, err)
	}
	_, n, ok := DataFileOf(name)
	if !ok {
		return 0, false, nil // a backup's own store: no mirror
	}
	src, size, head, err := d.liveFile(name)
	if err != nil {
		return fail(false, err)
	}
	defer src.Close()
	dst, have, created, err := d.openMirror(name, size, head)
	if err != nil {
		return fail(created, err)
	}
	defer dst.Close()
	inTable := table >= 0 && (storetool.Handle{Offset: table}).File() == n
	tableAt := (storetool.Handle{Offset: table}).FileOffset()
	if inTable && have > tableAt {
		return 0, created, nil // it holds the page table's record already
	}
	end, bad := have, error(nil)
	p, _ := d.file(name)
	err = storetool.Tool.ScanRange(d.fs, p, have, size, func(r storetool.ScanRecord) bool {
		if r.Err != nil {
			bad = fmt.Errorf("%w: %s: the record at offset %d does not check out, so it and what follows were not copied to %s: %w",
				autosave.ErrCorrupt, name, r.Handle.FileOffset(), MirrorName(name), r.Err)
			return false
		}
		if inTable && r.Handle.FileOffset() > tableAt {
			return false
		}
		end = r.Handle.FileOffset() + int64(r.Handle.Length)
		return !inTable || r.Handle.FileOffset() < tableAt
	})
	if err != nil {
		return fail(created, err)
	}
	if end > have {
		if err := growMirror(src, dst, have, end); err != nil {
			return fail(created, err)
		}
	}
	if bad != nil {
		return end - have, created, bad
	}
	return end - have, created, nil
}

// mirrorPlayersData grows the mirror of players data file name up to the
// end of the last record the players index p uses, checking each record
// on the way (its magic, lengths and CRC32-C).
func (d *Dir) mirrorPlayersData(name string, p *Players) (int64, bool, error) {
	fail := func(created bool, err error) (int64, bool, error) {
		return 0, created, fmt.Errorf("autosave: mirror %s: %w", name, err)
	}
	to := int64(0)
	for _, e := range p.Entries {
		to = max(to, e.Offset+int64(e.Length))
	}
	src, size, head, err := d.liveFile(name)
	if err != nil {
		return fail(false, err)
	}
	defer src.Close()
	dst, have, created, err := d.openMirror(name, size, head)
	if err != nil {
		return fail(created, err)
	}
	defer dst.Close()
	if to = min(to, size); have >= to {
		return 0, created, nil
	}
	buf := make([]byte, to-have)
	if _, err := src.ReadAt(buf, have); err != nil {
		return fail(created, err)
	}
	good, bad := playerRecordsEnd(buf, have)
	if bad != nil {
		bad = fmt.Errorf("%s: %w; it and what follows were not copied to %s", name, bad, MirrorName(name))
	}
	if good > 0 {
		if _, err := dst.WriteAt(buf[:good], have); err != nil {
			return fail(created, err)
		}
		if err := dst.Sync(); err != nil {
			return fail(created, err)
		}
	}
	return int64(good), created, bad
}

// playerRecordsEnd returns how many bytes of b, read at offset off of a
// players data file, are whole records that check out (the file's header
// too when off is 0), and the damage that stopped it.
func playerRecordsEnd(b []byte, off int64) (int, error) {
	at := 0
	if off == 0 {
		hdr := playersDataHeader()
		if len(b) < len(hdr) || !bytes.Equal(b[:len(hdr)], hdr) {
			return 0, fmt.Errorf("%w: the players data header is damaged", autosave.ErrCorrupt)
		}
		at = len(hdr)
	}
	for at < len(b) {
		rest := b[at:]
		n := 0
		if len(rest) >= 5 {
			if idEnd := 5 + int(rest[4]); len(rest) >= idEnd+4 {
				n = idEnd + 4 + int(binary.LittleEndian.Uint32(rest[idEnd:])) + 4
			}
		}
		if n < playerRecordFixedSize || n > len(rest) || string(rest[:4]) != playerRecordMagic ||
			crc32.Checksum(rest[:n-4], castagnoli) != binary.LittleEndian.Uint32(rest[n-4:n]) {
			return at, fmt.Errorf("%w: the player record at offset %d does not check out", autosave.ErrCorrupt, off+int64(at))
		}
		at += n
	}
	return at, nil
}
