package savedir

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
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
	if err := d.writeAtomic(rel, data); err != nil { // a crash leaves the old mirror or the new one
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

// mirrorPair opens file name of the top level for reading (src, of size
// bytes) and its mirror for growing (dst, holding have bytes; created when
// it was missing; see openMirror). On an error, nothing is left open.
func (d *Dir) mirrorPair(name string) (src, dst vfs.File, size, have int64, created bool, err error) {
	src, size, head, err := d.liveFile(name)
	if err != nil {
		return nil, nil, 0, 0, false, err
	}
	if dst, have, created, err = d.openMirror(name, size, head); err != nil {
		src.Close()
		return nil, nil, 0, 0, created, err
	}
	return src, dst, size, have, created, nil
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
	src, dst, size, have, created, err := d.mirrorPair(name)
	if err != nil {
		return fail(created, err)
	}
	defer src.Close()
	defer dst.Close()
	inTable := table >= 0 && (storetool.Handle{Offset: table}).File() == n
	tableAt := (storetool.Handle{Offset: table}).FileOffset()
	if inTable && have > tableAt {
		return 0, created, nil // it holds the page table's record already
	}
	lp, _ := d.file(name)
	end, bad, err := committedEnd(d.fs, lp, have, size, inTable, tableAt)
	if err == nil && bad != nil && end == have && have > 0 {
		// The mirror may end inside a record (a crash while it grew): it
		// goes on from its last whole record.
		mp, _ := d.file(MirrorName(name))
		if whole, _, merr := committedEnd(d.fs, mp, 0, have, false, 0); merr == nil && whole < have {
			if err = dst.Truncate(whole); err == nil {
				have = whole
				end, bad, err = committedEnd(d.fs, lp, have, size, inTable, tableAt)
			}
		}
	}
	if err != nil {
		return fail(created, err)
	}
	if end > have {
		if err := growMirror(src, dst, have, end); err != nil {
			_ = dst.Truncate(have) // never a record cut short
			return fail(created, err)
		}
	}
	if bad != nil {
		return end - have, created, fmt.Errorf("%s: %w; it and what follows were not copied to %s", name, bad, MirrorName(name))
	}
	return end - have, created, nil
}

// committedEnd walks the records of the data file at p from offset from
// (within the file) and returns where the last whole record that checks
// out ends, stopping after the page-table record at tableAt when inTable,
// before to otherwise; bad is the damage that stopped it.
func committedEnd(fsys vfs.FS, p string, from, to int64, inTable bool, tableAt int64) (end int64, bad, err error) {
	end = from
	err = storetool.Tool.ScanRange(fsys, p, from, to, func(r storetool.ScanRecord) bool {
		if r.Err != nil {
			bad = fmt.Errorf("%w: the record at offset %d does not check out: %w", autosave.ErrCorrupt, r.Handle.FileOffset(), r.Err)
			return false
		}
		if inTable && r.Handle.FileOffset() > tableAt {
			return false
		}
		end = r.Handle.FileOffset() + int64(r.Handle.Length)
		return !inTable || r.Handle.FileOffset() < tableAt
	})
	return end, bad, err
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
	src, dst, size, have, created, err := d.mirrorPair(name)
	if err != nil {
		return fail(created, err)
	}
	defer src.Close()
	defer dst.Close()
	if to = min(to, size); have >= to {
		return 0, created, nil
	}
	buf := make([]byte, to-have)
	if _, err := src.ReadAt(buf, have); err != nil {
		return fail(created, err)
	}
	good, bad := playerRecordsEnd(buf, have)
	if good == 0 && bad != nil && have > 0 {
		// The mirror may end inside a record (a crash while it grew): it
		// goes on from its last whole record.
		mp, _ := d.file(MirrorName(name))
		if old, err := vfs.ReadFile(d.fs, mp); err == nil {
			if whole, _ := playerRecordsEnd(old[:min(int64(len(old)), have)], 0); int64(whole) < have && dst.Truncate(int64(whole)) == nil {
				have = int64(whole)
				buf = make([]byte, to-have)
				if _, err := src.ReadAt(buf, have); err != nil {
					return fail(created, err)
				}
				good, bad = playerRecordsEnd(buf, have)
			}
		}
	}
	if bad != nil {
		bad = fmt.Errorf("%s: %w; it and what follows were not copied to %s", name, bad, MirrorName(name))
	}
	if good > 0 {
		_, err := dst.WriteAt(buf[:good], have)
		if err == nil {
			err = dst.Sync()
		}
		if err != nil {
			_ = dst.Truncate(have) // never a record cut short
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
		cut := n == 0 || n > len(rest) && n <= maxPlayerRecord // its header or its section runs past the end
		if cut && strings.HasPrefix(playerRecordMagic, string(rest[:min(4, len(rest))])) {
			return at, fmt.Errorf("%w: the player record at offset %d is cut short: %w", autosave.ErrCorrupt, off+int64(at), io.ErrUnexpectedEOF)
		}
		if n < playerRecordFixedSize || n > len(rest) || string(rest[:4]) != playerRecordMagic ||
			crc32.Checksum(rest[:n-4], castagnoli) != binary.LittleEndian.Uint32(rest[n-4:n]) {
			return at, fmt.Errorf("%w: the player record at offset %d does not check out", autosave.ErrCorrupt, off+int64(at))
		}
		at += n
	}
	return at, nil
}

// CheckMirrors verifies the mirrors in backups/ (MirrorName), for arksave
// check: each record of a data file's or players data file's mirror, a
// players index mirror's checksum, and that each holds the bytes of its
// file. A mirror shorter than its file is not damage (the next commit
// grows it); bytes that differ from an intact file are, as is a mirror
// of a file damaged names (one the generations' checks found damaged,
// which its mirror is compared against no further). It returns how many
// mirrors it checked and the damage, each problem naming the mirror.
func (d *Dir) CheckMirrors(damaged func(name string) bool) (int, []chunkstore.Problem) {
	names, err := d.fs.ReadDir(filepath.Join(d.path, BackupDir))
	if err != nil || d.checkBackupDir() != nil {
		return 0, nil
	}
	checked := 0
	var probs []chunkstore.Problem
	for _, n := range names {
		rel := BackupDir + "/" + n
		live, ok := MirroredName(rel)
		if !ok {
			continue
		}
		checked++
		if err := d.checkMirror(rel, live, !damaged(live)); err != nil {
			probs = append(probs, chunkstore.Problem{File: rel, Offset: -1, Err: err})
		}
	}
	return checked, probs
}

// checkMirror checks mirror rel of file live on its own and, when compare
// is set, against the file.
func (d *Dir) checkMirror(rel, live string, compare bool) error {
	p, err := d.file(rel)
	if err != nil {
		return err
	}
	switch _, _, isData := DataFileOf(live); {
	case isData:
		var bad error
		err = storetool.Tool.ScanRange(d.fs, p, 0, 1<<40, func(r storetool.ScanRecord) bool {
			if r.Err != nil && !errors.Is(r.Err, io.ErrUnexpectedEOF) {
				// (One cut short at the end is being written: the
				// mirror is shorter than its file until it is.)
				bad = fmt.Errorf("%w: the record at offset %d: %w", autosave.ErrCorrupt, r.Handle.FileOffset(), r.Err)
			}
			return r.Err == nil
		})
		if err = errors.Join(err, bad); err != nil {
			return err
		}
	case isPlayersDataName(live):
		data, err := vfs.ReadFile(d.fs, p)
		if err != nil {
			return err
		}
		// (A record cut short at the end is being written: the mirror is
		// shorter than its file until it is.)
		if _, err := playerRecordsEnd(data, 0); err != nil && len(data) > 0 && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
	case isPlayersIndexName(live):
		data, err := vfs.ReadFileLimit(d.fs, p, maxPlayersIndexSize)
		if err != nil {
			return err
		}
		if _, _, err := ParsePlayersIndex(data); err != nil {
			return err
		}
	}
	if !compare || isStoreName(live) {
		return nil // the store file's slots change with every commit
	}
	return d.sameBytes(rel, live)
}

func isPlayersDataName(name string) bool {
	_, ok := playersDataGeneration(name)
	return ok
}

func isPlayersIndexName(name string) bool {
	_, ok := playersGeneration(name)
	return ok
}

// sameBytes reports as damage the first byte at which mirror rel differs
// from file live, over the bytes both hold.
func (d *Dir) sameBytes(rel, live string) error {
	lp, err := d.file(live)
	if err != nil {
		return nil
	}
	lf, err := d.fs.Open(lp)
	if err != nil {
		return nil // a missing file is its generations' problem
	}
	defer lf.Close()
	mp, _ := d.file(rel)
	mf, err := d.fs.Open(mp)
	if err != nil {
		return err
	}
	defer mf.Close()
	ls, err1 := lf.Size()
	ms, err2 := mf.Size()
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	a, b := make([]byte, mirrorChunk), make([]byte, mirrorChunk)
	for off := int64(0); off < min(ls, ms); off += mirrorChunk {
		n := min(min(ls, ms)-off, mirrorChunk)
		if _, err := lf.ReadAt(a[:n], off); err != nil {
			return err
		}
		if _, err := mf.ReadAt(b[:n], off); err != nil {
			return err
		}
		for i := range n {
			if a[i] != b[i] {
				return fmt.Errorf("%w: it differs from %s at offset %d: %s reads intact, so the mirror is damaged (arksave repair grows it again)",
					autosave.ErrCorrupt, live, off+i, live)
			}
		}
	}
	return nil
}

// RestoreFromMirrors restores, for arksave repair, the damaged files of
// the committed generation and of each backup from their mirrors, when the
// generation verifies with the mirrors in their place (as a load's
// fallback reads it: MirrorRestorable): each such file is rewritten as its
// mirror's bytes followed by what the file holds past them (through a temp
// file, synced and renamed). It returns the files restored. It needs the
// directory's lock.
func (d *Dir) RestoreFromMirrors() ([]string, error) {
	if err := d.checkLock(); err != nil {
		return nil, err
	}
	var restored []string
	for _, name := range d.MirrorRestorable() {
		if err := d.restoreFromMirror(name); err != nil {
			return restored, err
		}
		restored = append(restored, name)
	}
	return restored, nil
}

// MirrorRestorable lists the damaged files of the committed generation and
// of the backups that their mirrors hold for a generation: the generation
// verifies with the mirrors in their place. It changes nothing (a dry run
// of a repair says what RestoreFromMirrors would restore).
func (d *Dir) MirrorRestorable() []string {
	var gens []*Manifest
	if m := d.Manifest(); m != nil {
		gens = append(gens, m)
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range append(gens, d.Backups()...) {
		_, probs, err := d.VerifyGeneration(m, nil)
		if err != nil || len(probs) == 0 {
			continue
		}
		mm := d.withMirrors(m, probs)
		if mm == nil {
			continue
		}
		if _, probs, err := d.VerifyGeneration(mm, nil); err != nil || len(probs) > 0 {
			continue
		}
		for _, name := range mirroredIn(mm) {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// mirroredIn lists the files m reads from their mirrors (withMirrors).
func mirroredIn(m *Manifest) []string {
	names := append([]string{m.Chunks.Name}, m.Chunks.Data...)
	if m.Players != nil {
		names = append(names, m.Players.Index.Name, m.Players.Data)
	}
	var out []string
	for _, n := range names {
		if live, ok := MirroredName(n); ok {
			out = append(out, live)
		}
	}
	return out
}

// restoreFromMirror rewrites file name as its mirror's bytes followed by
// what the file holds past them.
func (d *Dir) restoreFromMirror(name string) error {
	fail := func(err error) error {
		return fmt.Errorf("autosave: restore %s from %s: %w", name, MirrorName(name), err)
	}
	mp, err := d.file(MirrorName(name))
	if err != nil {
		return fail(err)
	}
	lp, err := d.file(name)
	if err != nil {
		return fail(err)
	}
	tmp, err := d.file(name + ".tmp")
	if err != nil {
		return fail(err)
	}
	mf, err := d.fs.Open(mp)
	if err != nil {
		return fail(err)
	}
	defer mf.Close()
	ms, err := mf.Size()
	if err != nil {
		return fail(err)
	}
	out, err := d.fs.Create(tmp)
	if err != nil {
		return fail(err)
	}
	err = growMirror(mf, out, 0, ms)
	if lf, lerr := d.fs.Open(lp); lerr == nil && err == nil {
		if ls, serr := lf.Size(); serr == nil && ls > ms {
			err = growMirror(lf, out, ms, ls)
		}
		lf.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.fs.Rename(tmp, lp)
	}
	if err == nil {
		err = d.fs.SyncDir(d.path)
	}
	if err != nil {
		_ = d.fs.Remove(tmp)
		return fail(err)
	}
	return nil
}

// GrowMirrors grows the mirrors of the committed generation's files (see
// the writer's copyBackup), for a repair that removed a damaged mirror or
// restored a file. It returns the bytes written.
func (d *Dir) GrowMirrors() (int64, error) {
	if err := d.checkLock(); err != nil {
		return 0, err
	}
	players, err := d.ReadPlayers(nil)
	if err != nil {
		return 0, err
	}
	return d.mirror(d.Manifest(), players)
}

// RemoveMirror removes mirror rel (a name MirroredName accepts), for a
// repair that found it damaged: GrowMirrors makes it again from its file.
// It needs the directory's lock.
func (d *Dir) RemoveMirror(rel string) error {
	if err := d.checkLock(); err != nil {
		return err
	}
	if _, ok := MirroredName(rel); !ok {
		return fmt.Errorf("%w: %q is not a mirror's name", autosave.ErrCorrupt, rel)
	}
	if err := d.remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
