package savedir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// Players are saved apart from the world and the chunks: every player's
// record (its entities, one entity section of package archetype) in an
// append-only players data file, and per generation an index of every
// saved player that the manifest names (PlayersRef). A save appends only
// the records of the players that changed, then writes the next index: a
// player that did not change is not written again, and a player can be
// read alone, by id, without reading the others.
//
// Players data file, players.pxpd (players-<G>.pxpd after a compaction at
// G), little-endian:
//
//	offset 0  "PXPD" │ version u16 (1) │ reserved u16 (0)
//	offset 8  records, appended:
//	  "PXPR" │ id length u8 │ id │ section length u32 │ section │ CRC32-C u32 of the record before it
//
// Players index of generation G, players-<G>.pxpl:
//
//	"PXPL" │ version u16 (1) │ reserved u16 (0) │ generation u64 │ count u32
//	entries, ascending by id: id length u8 │ id │ record offset u64 │ record length u32 │ record CRC32-C u32
//	CRC32-C u32 of everything before it
//
// An index is written only by a save that changes a player; the manifests
// of later generations keep naming it. Both files are checked before their
// bytes are trusted: the index against the size and CRC32-C the manifest
// holds and its own CRC, each record against its entry and its own CRC.
const (
	PlayersDataName = "players.pxpd" // the players data file of a save's first players

	playersDataMagic  = "PXPD"
	playersIndexMagic = "PXPL"
	playerRecordMagic = "PXPR"
	playersVersion    = 1

	playersDataHeaderSize  = 8                          // magic, version u16, reserved u16
	playersIndexHeaderSize = 4 + 2 + 2 + 8 + 4          // magic, version, reserved, generation, count
	playerEntryFixedSize   = 1 + 8 + 4 + 4              // id length, offset, length, crc
	playerRecordFixedSize  = 4 + 1 + 4 + 4              // magic, id length, section length, crc
	maxPlayerID            = 255                        // bytes
	maxPlayersIndexSize    = 1 << 30                    // an index is never read whole beyond this
	maxPlayerRecord        = 1 << 30                    // nor a record
	playersCompactMin      = 1 << 20                    // a data file smaller than this is never compacted
	playersIndexMinSize    = playersIndexHeaderSize + 4 // an index of no player
	playersCompactDeadPart = 2                          // compact when live bytes are less than 1/2 of the file
)

// PlayersName returns the file name of the players index of generation g.
func PlayersName(g uint64) string { return fmt.Sprintf("players-%d.pxpl", g) }

// PlayersDataNameAt returns the file name of a players data file that a
// compaction at generation g wrote.
func PlayersDataNameAt(g uint64) string { return fmt.Sprintf("players-%d.pxpd", g) }

// PlayersRef names the players of a save generation: its index (with size
// and CRC32-C) and the data file its entries point into.
type PlayersRef struct {
	Index FileRef `json:"index"`
	Data  string  `json:"data"`
}

// PlayerEntry is one player of an index: where its record is.
type PlayerEntry struct {
	ID     string
	Offset int64
	Length uint32
	CRC32C uint32
}

// Players is a verified players index: every saved player of a generation.
type Players struct {
	Ref        PlayersRef
	Generation uint64        // the generation that wrote the index
	Entries    []PlayerEntry // ascending by ID
}

// IDs returns the saved player ids, ascending.
func (p *Players) IDs() []string {
	if p == nil {
		return nil
	}
	ids := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		ids[i] = e.ID
	}
	return ids
}

// Find returns the entry of player id.
func (p *Players) Find(id string) (PlayerEntry, bool) {
	if p == nil {
		return PlayerEntry{}, false
	}
	i, ok := slices.BinarySearchFunc(p.Entries, id, func(e PlayerEntry, id string) int { return strings.Compare(e.ID, id) })
	if !ok {
		return PlayerEntry{}, false
	}
	return p.Entries[i], true
}

// checkPlayerID refuses an id the players files cannot hold.
func checkPlayerID(id string) error {
	if id == "" || len(id) > maxPlayerID {
		return fmt.Errorf("autosave: player id %q: want 1 to %d bytes", id, maxPlayerID)
	}
	return nil
}

// EncodePlayersIndex returns the bytes of a players index.
func EncodePlayersIndex(gen uint64, entries []PlayerEntry) []byte {
	size := playersIndexHeaderSize + 4
	for _, e := range entries {
		size += playerEntryFixedSize + len(e.ID)
	}
	b := make([]byte, 0, size)
	b = append(b, playersIndexMagic...)
	b = binary.LittleEndian.AppendUint16(b, playersVersion)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint64(b, gen)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = append(b, byte(len(e.ID)))
		b = append(b, e.ID...)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.Offset))
		b = binary.LittleEndian.AppendUint32(b, e.Length)
		b = binary.LittleEndian.AppendUint32(b, e.CRC32C)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// ParsePlayersIndex decodes and verifies a players index: magic, version,
// checksum, then every entry (ids ascending and distinct, records that lie
// in the data file's body). Damage is ErrCorrupt naming the offset.
func ParsePlayersIndex(data []byte) (gen uint64, entries []PlayerEntry, err error) {
	fail := func(off int, format string, args ...any) (uint64, []PlayerEntry, error) {
		return 0, nil, fmt.Errorf("%w: players index at offset %d: %s", autosave.ErrCorrupt, off, fmt.Sprintf(format, args...))
	}
	if len(data) < playersIndexMinSize {
		return fail(0, "%d bytes, at least %d needed", len(data), playersIndexMinSize)
	}
	if string(data[:4]) != playersIndexMagic {
		return fail(0, "magic %q, want %q", data[:4], playersIndexMagic)
	}
	if v := binary.LittleEndian.Uint16(data[4:]); v != playersVersion {
		return 0, nil, fmt.Errorf("%w: players index version %d, this build reads %d", autosave.ErrVersion, v, playersVersion)
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return fail(len(data)-4, "crc32c %08x, stored %08x", got, want)
	}
	if r := binary.LittleEndian.Uint16(data[6:]); r != 0 {
		return fail(6, "reserved %#x", r)
	}
	gen = binary.LittleEndian.Uint64(data[8:])
	count := uint64(binary.LittleEndian.Uint32(data[16:]))
	rest := body[playersIndexHeaderSize:]
	if count > uint64(len(rest))/(playerEntryFixedSize+1) {
		return fail(16, "%d entries in %d bytes", count, len(rest))
	}
	entries = make([]PlayerEntry, 0, count)
	for i := range count {
		at := len(body) - len(rest)
		n := int(rest[0])
		if n == 0 || len(rest) < 1+n+playerEntryFixedSize-1 {
			return fail(at, "entry %d: id of %d bytes, %d left", i, n, len(rest)-1)
		}
		e := PlayerEntry{ID: string(rest[1 : 1+n])}
		r := rest[1+n:]
		e.Offset = int64(binary.LittleEndian.Uint64(r))
		e.Length = binary.LittleEndian.Uint32(r[8:])
		e.CRC32C = binary.LittleEndian.Uint32(r[12:])
		rest = r[16:]
		switch {
		case e.Offset < playersDataHeaderSize || e.Offset > 1<<62:
			return fail(at, "entry %d (%q): record at offset %d", i, e.ID, e.Offset)
		case uint64(e.Length) < playerRecordFixedSize+uint64(n) || e.Length > maxPlayerRecord:
			return fail(at, "entry %d (%q): record of %d bytes", i, e.ID, e.Length)
		case i > 0 && e.ID <= entries[i-1].ID:
			return fail(at, "entry %d (%q): ids not ascending", i, e.ID)
		}
		entries = append(entries, e)
	}
	if len(rest) != 0 {
		return fail(len(body)-len(rest), "%d bytes after the last entry", len(rest))
	}
	return gen, entries, nil
}

// AppendPlayerRecord appends the record of player id holding section.
func AppendPlayerRecord(dst []byte, id string, section []byte) []byte {
	start := len(dst)
	dst = append(dst, playerRecordMagic...)
	dst = append(dst, byte(len(id)))
	dst = append(dst, id...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(section)))
	dst = append(dst, section...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// ParsePlayerRecord verifies a player's record read at offset off (its
// magic, CRC32-C, lengths and id) and returns its entity section, a slice
// of rec.
func ParsePlayerRecord(rec []byte, off int64, id string) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("%w: player record at offset %d: %s", autosave.ErrCorrupt, off, fmt.Sprintf(format, args...))
	}
	if len(rec) < playerRecordFixedSize {
		return fail("%d bytes", len(rec))
	}
	if string(rec[:4]) != playerRecordMagic {
		return fail("magic %q, want %q", rec[:4], playerRecordMagic)
	}
	body := rec[:len(rec)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(rec[len(rec)-4:]); got != want {
		return fail("crc32c %08x, stored %08x", got, want)
	}
	n := int(rec[4])
	if len(body) < 5+n+4 {
		return fail("id of %d bytes in %d", n, len(rec))
	}
	if got := string(body[5 : 5+n]); got != id {
		return fail("holds player %q, want %q", got, id)
	}
	size := uint64(binary.LittleEndian.Uint32(body[5+n:]))
	if size != uint64(len(body)-5-n-4) {
		return fail("section of %d bytes, %d there", size, len(body)-5-n-4)
	}
	return body[5+n+4:], nil
}

// ReadPlayers reads and verifies the players index that m names (the
// committed manifest when m is nil); nil when the generation has no players.
func (d *Dir) ReadPlayers(m *Manifest) (*Players, error) {
	if m == nil {
		m = d.man.Load()
	}
	if m == nil || m.Players == nil {
		return nil, nil
	}
	if m.Players.Index.Size > maxPlayersIndexSize {
		return nil, fmt.Errorf("%w: %s: %d bytes", autosave.ErrCorrupt, m.Players.Index.Name, m.Players.Index.Size)
	}
	data, err := d.readRef(m.Players.Index)
	if err != nil {
		return nil, err
	}
	gen, entries, err := ParsePlayersIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Players.Index.Name, err)
	}
	return &Players{Ref: *m.Players, Generation: gen, Entries: entries}, nil
}

// ReadPlayer reads player id's record from the data file p names, verifies
// it and returns its entity section. A player p does not hold is
// ErrNoPlayer.
func (d *Dir) ReadPlayer(p *Players, id string) ([]byte, error) {
	e, ok := p.Find(id)
	if !ok {
		return nil, fmt.Errorf("%w: %q", autosave.ErrNoPlayer, id)
	}
	rec, err := d.readAt(p.Ref.Data, e.Offset, int64(e.Length))
	if err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(rec[len(rec)-4:]); got != e.CRC32C {
		return nil, fmt.Errorf("%w: %s: player %q at offset %d: crc32c %08x, the index says %08x", autosave.ErrCorrupt, p.Ref.Data, id, e.Offset, got, e.CRC32C)
	}
	sec, err := ParsePlayerRecord(rec, e.Offset, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Ref.Data, err)
	}
	return sec, nil
}

// readAt reads n bytes at off of a file of the directory; a file too
// short for them is damage.
func (d *Dir) readAt(name string, off, n int64) ([]byte, error) {
	p, err := d.file(name)
	if err != nil {
		return nil, err
	}
	f, err := d.fs.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s named by the manifest is missing", autosave.ErrCorrupt, name)
	}
	if err != nil {
		return nil, fmt.Errorf("autosave: read %s: %w", name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("autosave: read %s: %w", name, err)
	}
	if off < 0 || n < 0 || off > size || n > size-off {
		return nil, fmt.Errorf("%w: %s: %d bytes at offset %d lie past its end (%d bytes)", autosave.ErrCorrupt, name, n, off, size)
	}
	buf := make([]byte, n)
	if k, err := f.ReadAt(buf, off); int64(k) < n && !(errors.Is(err, io.EOF) && int64(k) == n) {
		return nil, fmt.Errorf("autosave: read %s: %w", name, err)
	}
	return buf, nil
}

// writePlayers makes the players of the next generation durable: it
// appends the changed records to the data file (a new one when there is
// none yet, or when most of the current one is dead: then every live
// record is copied into players-<gen>.pxpd) and syncs it, then writes and
// syncs players-<gen>.pxpl. cur is the committed players (nil for none).
// It returns the new players (their reference is for the manifest) and the
// bytes written. Until a
// manifest names them, what it wrote is ignored: records past the end a
// committed index knows are dead space, an index of no committed
// generation is removed by the next OpenDir.
func (d *Dir) writePlayers(cur *Players, gen uint64, recs []snapshot.PlayerRecord) (*Players, int64, error) {
	entries := map[string]PlayerEntry{}
	data := ""
	if cur != nil {
		data = cur.Ref.Data
		for _, e := range cur.Entries {
			entries[e.ID] = e
		}
	}
	for _, r := range recs {
		if err := checkPlayerID(r.ID); err != nil {
			return nil, 0, err
		}
	}
	if data == "" {
		name, err := d.freshPlayersData(gen)
		if err != nil {
			return nil, 0, err
		}
		data = name
	}
	f, size, err := d.openPlayersData(data)
	if err != nil {
		return nil, 0, err
	}
	var written int64
	var buf []byte
	for _, r := range recs {
		if r.Section == nil {
			delete(entries, r.ID)
			continue
		}
		start := len(buf)
		buf = AppendPlayerRecord(buf, r.ID, r.Section)
		rec := buf[start:]
		entries[r.ID] = PlayerEntry{ID: r.ID, Offset: size + int64(start), Length: uint32(len(rec)),
			CRC32C: binary.LittleEndian.Uint32(rec[len(rec)-4:])}
	}
	if len(buf) > 0 {
		if _, err := f.WriteAt(buf, size); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("autosave: write %s: %w", data, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("autosave: sync %s: %w", data, err)
		}
		written += int64(len(buf))
		size += int64(len(buf))
	}
	list := make([]PlayerEntry, 0, len(entries))
	live := int64(playersDataHeaderSize)
	for _, e := range entries {
		list = append(list, e)
		live += int64(e.Length)
	}
	slices.SortFunc(list, func(a, b PlayerEntry) int { return strings.Compare(a.ID, b.ID) })
	if size >= playersCompactMin && live*playersCompactDeadPart < size {
		name := PlayersDataNameAt(gen)
		n, err := d.compactPlayers(f, data, name, list)
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		data = name
		written += n
	}
	f.Close()
	idx := EncodePlayersIndex(gen, list)
	ref := FileRef{Name: PlayersName(gen), Size: int64(len(idx)), CRC32C: crc32.Checksum(idx, castagnoli)}
	if err := d.writeSynced(ref.Name, idx); err != nil {
		return nil, 0, err
	}
	return &Players{Ref: PlayersRef{Index: ref, Data: data}, Generation: gen, Entries: list}, written + ref.Size, nil
}

// WritePlayersIndex writes and syncs the players index of generation gen
// holding the entries of p (which point into p.Ref.Data), and returns the
// reference for a manifest: for a repair that drops damaged records or
// rebuilds a lost manifest.
func (d *Dir) WritePlayersIndex(gen uint64, p *Players) (PlayersRef, error) {
	if err := d.writable(); err != nil {
		return PlayersRef{}, err
	}
	idx := EncodePlayersIndex(gen, p.Entries)
	ref := FileRef{Name: PlayersName(gen), Size: int64(len(idx)), CRC32C: crc32.Checksum(idx, castagnoli)}
	if err := d.writeSynced(ref.Name, idx); err != nil {
		return PlayersRef{}, err
	}
	return PlayersRef{Index: ref, Data: p.Ref.Data}, nil
}

// ReadPlayersFile reads and verifies the players index in the file name
// (for a directory whose manifest is lost) and pairs it with the players
// data file it points into: the one of the newest generation not after the
// index's (players.pxpd counting as generation 0).
func (d *Dir) ReadPlayersFile(name string) (*Players, error) {
	g, ok := playersGeneration(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a players index's name", autosave.ErrCorrupt, name)
	}
	p, err := d.file(name)
	if err != nil {
		return nil, err
	}
	data, err := readBounded(d.fs, p, maxPlayersIndexSize)
	if err != nil {
		return nil, err
	}
	gen, entries, err := ParsePlayersIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	best, found := uint64(0), false
	names, _ := d.fs.ReadDir(d.path)
	dataName := ""
	for _, n := range names {
		if dg, ok := playersDataGeneration(n); ok && dg <= g && (!found || dg > best) {
			best, found, dataName = dg, true, n
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: %s: no players data file of generation %d or before", autosave.ErrCorrupt, name, g)
	}
	ref := PlayersRef{Index: FileRef{Name: name, Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli)}, Data: dataName}
	return &Players{Ref: ref, Generation: gen, Entries: entries}, nil
}

// PlayersFiles lists the players index files of the directory, newest
// generation first.
func (d *Dir) PlayersFiles() []string {
	names, _ := d.fs.ReadDir(d.path)
	var out []string
	for _, n := range names {
		if _, ok := playersGeneration(n); ok {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		ga, _ := playersGeneration(a)
		gb, _ := playersGeneration(b)
		switch {
		case ga > gb:
			return -1
		case ga < gb:
			return 1
		}
		return 0
	})
	return out
}

// freshPlayersData picks the name of a new players data file for a save
// of generation gen: players.pxpd or players-<g>.pxpd (g no later than
// gen, newest first) that no file of the directory has, so that a file a
// backup may still need is never reused. When every such name is taken, a
// file that no manifest names (the current one, a backup's) is the leftover
// of saves that never committed (a game killed in its first saves with
// players): it is removed and its name taken, unless a backup manifest is
// damaged and might name it.
func (d *Dir) freshPlayersData(gen uint64) (string, error) {
	names := []string{PlayersDataName}
	for g := gen; g >= 1 && len(names) < 64; g-- {
		names = append(names, PlayersDataNameAt(g))
	}
	for _, name := range names {
		p, err := d.file(name)
		if err != nil {
			return "", err
		}
		if _, err := d.fs.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
	}
	if len(d.DamagedBackups()) == 0 {
		named := map[string]bool{}
		for _, m := range append(d.Backups(), d.Manifest()) {
			if m != nil && m.Players != nil {
				named[m.Players.Data] = true
			}
		}
		for _, name := range names {
			if !named[name] {
				if err := d.remove(name); err != nil {
					return "", fmt.Errorf("autosave: remove %s, left by a save that did not commit: %w", name, err)
				}
				return name, nil
			}
		}
	}
	return "", fmt.Errorf("autosave: no free players data file name in %s (%s and players-<g>.pxpd for g up to %d exist)", d.path, PlayersDataName, gen)
}

// openPlayersData opens a players data file for appending, creating it
// (with its header, synced into the directory) when it does not exist, and
// returns its size.
func (d *Dir) openPlayersData(name string) (vfs.File, int64, error) {
	p, err := d.file(name)
	if err != nil {
		return nil, 0, err
	}
	f, err := d.fs.OpenRW(p)
	if errors.Is(err, fs.ErrNotExist) {
		if f, err = d.fs.Create(p); err == nil {
			if _, err = f.WriteAt(playersDataHeader(), 0); err == nil {
				if err = f.Sync(); err == nil {
					err = d.fs.SyncDir(d.path)
				}
			}
			if err != nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("autosave: open %s: %w", name, err)
	}
	size, err := f.Size()
	if err == nil && size < playersDataHeaderSize {
		err = fmt.Errorf("%w: %s: %d bytes, shorter than its header", autosave.ErrCorrupt, name, size)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

func playersDataHeader() []byte {
	b := append([]byte(playersDataMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint16(b[4:], playersVersion)
	return b
}

// compactPlayers copies the live records of src (open as f) into a new
// data file name, synced, and points the entries at their new offsets.
func (d *Dir) compactPlayers(f vfs.File, src, name string, entries []PlayerEntry) (int64, error) {
	p, err := d.file(name)
	if err != nil {
		return 0, err
	}
	out := playersDataHeader()
	for i := range entries {
		e := &entries[i]
		rec := make([]byte, e.Length)
		if n, err := f.ReadAt(rec, e.Offset); n < len(rec) && !(errors.Is(err, io.EOF) && n == len(rec)) {
			return 0, fmt.Errorf("autosave: compact %s: read player %q: %w", src, e.ID, err)
		}
		e.Offset = int64(len(out))
		out = append(out, rec...)
	}
	nf, err := d.fs.Create(p)
	if err != nil {
		return 0, fmt.Errorf("autosave: create %s: %w", name, err)
	}
	defer nf.Close()
	if _, err := nf.WriteAt(out, 0); err != nil {
		return 0, fmt.Errorf("autosave: write %s: %w", name, err)
	}
	if err := nf.Sync(); err != nil {
		return 0, fmt.Errorf("autosave: sync %s: %w", name, err)
	}
	return int64(len(out)), nil
}

// copyPlayers writes every live record of src (read through d) into a new
// players data file of target and returns the players as target's
// generation gen names them, for a Save As. With no players it returns nil.
func copyPlayers(d *Dir, src *Players, target *Dir, gen uint64) (*Players, error) {
	if src == nil || len(src.Entries) == 0 {
		return nil, nil
	}
	name, err := target.freshPlayersData(gen)
	if err != nil {
		return nil, err
	}
	return copyPlayerRecords(d, src, target, name, gen)
}

// copyPlayerRecords writes every live record of src (read through d),
// compacted, into the players data file name of target, synced, and
// returns the players of generation gen with their entries pointing there
// (no index is written).
func copyPlayerRecords(d *Dir, src *Players, target *Dir, name string, gen uint64) (*Players, error) {
	out := playersDataHeader()
	entries := slices.Clone(src.Entries)
	for i := range entries {
		e := &entries[i]
		rec, err := d.readAt(src.Ref.Data, e.Offset, int64(e.Length))
		if err != nil {
			return nil, err
		}
		e.Offset = int64(len(out))
		out = append(out, rec...)
	}
	if err := target.writeSynced(name, out); err != nil {
		return nil, err
	}
	return &Players{Ref: PlayersRef{Data: name}, Generation: gen, Entries: entries}, nil
}

// copyPlayersAs writes the players src into files of their own, each
// record read and verified first (ReadPlayer): see writePlayersFiles.
func (d *Dir) copyPlayersAs(src *Players, index, data string, gen uint64) (*PlayersRef, int64, error) {
	recs := make([]snapshot.PlayerRecord, 0, len(src.Entries))
	for _, e := range src.Entries {
		sec, err := d.ReadPlayer(src, e.ID)
		if err != nil {
			return nil, 0, err
		}
		recs = append(recs, snapshot.PlayerRecord{ID: e.ID, Section: sec})
	}
	return d.writePlayersFiles(index, data, gen, recs)
}

// WritePlayersFiles writes the players recs (each an id and its entity
// section; a nil section leaves the player out) into players files of
// their own for generation gen, players-<gen>.pxpd and players-<gen>.pxpl,
// and returns their reference for the Commit of gen: for a repair that
// gathers its players from several files. No file may have those names
// yet: gen is above the HighestGeneration the repair started from.
func (d *Dir) WritePlayersFiles(gen uint64, recs []snapshot.PlayerRecord) (PlayersRef, error) {
	if err := d.writable(); err != nil {
		return PlayersRef{}, err
	}
	for _, name := range []string{PlayersName(gen), PlayersDataNameAt(gen)} {
		p, err := d.file(name)
		if err != nil {
			return PlayersRef{}, err
		}
		if _, err := d.fs.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return PlayersRef{}, fmt.Errorf("autosave: write players files of generation %d: %s exists", gen, name)
		}
	}
	ref, _, err := d.writePlayersFiles(PlayersName(gen), PlayersDataNameAt(gen), gen, recs)
	if err != nil {
		_ = d.removePlayersFiles(PlayersName(gen), PlayersDataNameAt(gen))
		return PlayersRef{}, err
	}
	return *ref, nil
}

// writePlayersFiles writes the players recs into a players data file of
// their own, data, synced, then the index of generation gen naming them
// into index, through index.tmp (synced, renamed, the directory synced).
// It returns the reference a manifest names them by and the bytes
// written. On error, what it wrote is left for the caller to remove.
func (d *Dir) writePlayersFiles(index, data string, gen uint64, recs []snapshot.PlayerRecord) (*PlayersRef, int64, error) {
	recs = slices.DeleteFunc(slices.Clone(recs), func(r snapshot.PlayerRecord) bool { return r.Section == nil })
	slices.SortFunc(recs, func(a, b snapshot.PlayerRecord) int { return strings.Compare(a.ID, b.ID) })
	out := playersDataHeader()
	entries := make([]PlayerEntry, 0, len(recs))
	for i, r := range recs {
		if err := checkPlayerID(r.ID); err != nil {
			return nil, 0, err
		}
		if i > 0 && recs[i-1].ID == r.ID {
			return nil, 0, fmt.Errorf("autosave: write %s: player %q twice", data, r.ID)
		}
		start := len(out)
		out = AppendPlayerRecord(out, r.ID, r.Section)
		rec := out[start:]
		entries = append(entries, PlayerEntry{ID: r.ID, Offset: int64(start), Length: uint32(len(rec)),
			CRC32C: binary.LittleEndian.Uint32(rec[len(rec)-4:])})
	}
	if err := d.writeSynced(data, out); err != nil {
		return nil, 0, err
	}
	idx := EncodePlayersIndex(gen, entries)
	if err := d.writeAtomic(index, idx); err != nil {
		return nil, 0, fmt.Errorf("autosave: write %s: %w", index, err)
	}
	ref := &PlayersRef{Index: FileRef{Name: index, Size: int64(len(idx)), CRC32C: crc32.Checksum(idx, castagnoli)}, Data: data}
	return ref, int64(len(out)) + ref.Index.Size, nil
}

// adoptPlayers returns the players that m names as the new generation gen
// may name them: as they are, or, when they are a backup's own copy
// (which no current manifest may name, and which nothing ever writes to),
// copied into players-<gen>.pxpd and players-<gen>.pxpl. The names must be
// free: gen is above every generation of the directory.
func (d *Dir) adoptPlayers(m *Manifest, gen uint64) (*PlayersRef, error) {
	if !isCopiedPlayers(m.Players) && !readsMirror(m.Players) {
		return m.Players, nil
	}
	p, err := d.ReadPlayers(m)
	if err != nil {
		return nil, err
	}
	ref, _, err := d.copyPlayersAs(p, PlayersName(gen), PlayersDataNameAt(gen), gen)
	if err != nil {
		_ = d.removePlayersFiles(PlayersName(gen), PlayersDataNameAt(gen))
		return nil, fmt.Errorf("autosave: copy the players of backup %d: %w", m.Generation, err)
	}
	return ref, nil
}

// removePlayersFiles removes players files that no manifest names (and
// their temp files), for a copy that failed; files already gone are fine.
func (d *Dir) removePlayersFiles(names ...string) error {
	var first error
	for _, n := range names {
		for _, rel := range []string{n, n + ".tmp"} {
			if err := d.remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = err
			}
		}
	}
	return first
}

// PendingPlayers returns the reference of the copy of the players that the
// writer made for the committed generation's backup
// (backups/players-<G>.pxpl), which no manifest names until the next commit
// retires that generation, or nil when there is none whose index reads. A
// repair reads the players of the committed generation from it.
func (d *Dir) PendingPlayers() *PlayersRef { return d.pendingPlayers() }

// pendingPlayers returns the reference of the copy of the players made for
// the committed generation's backup (CopiedPlayersName), which the next
// commit's backup of that generation names, or nil when there is none
// whose index reads. Its records are verified by whoever uses it
// (VerifyGeneration).
func (d *Dir) pendingPlayers() *PlayersRef {
	g := d.Generation()
	if g == 0 || d.checkBackupDir() != nil {
		return nil
	}
	name := CopiedPlayersName(g)
	p, err := d.file(name)
	if err != nil {
		return nil
	}
	data, err := readBounded(d.fs, p, maxPlayersIndexSize)
	if err != nil {
		return nil
	}
	if _, _, err := ParsePlayersIndex(data); err != nil {
		return nil
	}
	return &PlayersRef{Index: FileRef{Name: name, Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli)}, Data: CopiedPlayersDataName(g)}
}

// playersGeneration returns G of a players index's name, "players-<G>.pxpl".
func playersGeneration(name string) (uint64, bool) { return generationIn(name, "players-", ".pxpl") }

// isPlayersIndex reports whether name is a players index of generation at
// least least.
func isPlayersIndex(name string, least uint64) bool {
	g, ok := playersGeneration(name)
	return ok && g >= least
}

// playersDataGeneration returns the generation a players data file's name
// carries: 0 for players.pxpd, G for players-<G>.pxpd.
func playersDataGeneration(name string) (uint64, bool) {
	if name == PlayersDataName {
		return 0, true
	}
	return generationIn(name, "players-", ".pxpd")
}

// checkPlayersRef checks the names of a manifest's players against their
// forms: an index players-<g>.pxpl and a data file players.pxpd or
// players-<g>.pxpd, each of a generation no later than the manifest's; or,
// in a backup's manifest (backup set), the backup's own copy of them,
// backups/players-<G>.pxpl and backups/players-<G>.pxpd of its generation G.
func checkPlayersRef(m *Manifest, backup bool) error {
	p := m.Players
	if p == nil {
		return nil
	}
	if p.Index.Size < 0 {
		return fmt.Errorf("%w: manifest of generation %d: players.index.size %d", autosave.ErrCorrupt, m.Generation, p.Index.Size)
	}
	gi, copiedIndex := copiedPlayersGeneration(p.Index.Name)
	gd, copiedData := copiedPlayersGeneration(p.Data)
	if copiedIndex || copiedData {
		if !backup || gi != m.Generation || p.Index.Name != CopiedPlayersName(m.Generation) || gd != m.Generation || p.Data != CopiedPlayersDataName(m.Generation) {
			return fmt.Errorf("%w: manifest of generation %d: players %q and %q: only the backup of generation %d may name its own players copy, %s and %s",
				autosave.ErrCorrupt, m.Generation, p.Index.Name, p.Data, m.Generation, CopiedPlayersName(m.Generation), CopiedPlayersDataName(m.Generation))
		}
		return nil
	}
	if g, ok := playersGeneration(p.Index.Name); !ok || g > m.Generation {
		return fmt.Errorf("%w: manifest of generation %d: players.index.name %q is not a players index of generation 1 to %d (players-<generation>.pxpl)",
			autosave.ErrCorrupt, m.Generation, p.Index.Name, m.Generation)
	}
	if g, ok := playersDataGeneration(p.Data); !ok || g > m.Generation {
		return fmt.Errorf("%w: manifest of generation %d: players.data %q is not a players data file (players.pxpd or players-<generation>.pxpd)",
			autosave.ErrCorrupt, m.Generation, p.Data)
	}
	return nil
}

// readsMirror reports whether p names a mirror (MirrorName) for its index
// or its data file: the players of a generation verified with the mirrors
// of its damaged files, which a fallback copies.
func readsMirror(p *PlayersRef) bool {
	if p == nil {
		return false
	}
	_, index := MirroredName(p.Index.Name)
	_, data := MirroredName(p.Data)
	return index || data
}

// isCopiedPlayers reports whether p names a backup's own players copy.
func isCopiedPlayers(p *PlayersRef) bool {
	if p == nil {
		return false
	}
	_, ok := copiedPlayersGeneration(p.Index.Name)
	return ok
}
