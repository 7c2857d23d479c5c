// Package chunkstore is the chunk store of a pixel world (PXSW): chunks
// the player changed, each in the smallest of three encodings (a delta
// against the game's procedural [Generator], a palette of its distinct
// pixels, or every pixel), with the game's own extra data for the chunk
// and the pixel bodies kept with each chunk,
// in a store file of two header slots and append-only data files of
// bounded size, crash-safe, whose commits cost what changed, not what the
// world holds, and whose compaction costs one data file, not the world.
//
// # Outline
//
//   - [Create] makes a store and [Open] opens one, giving a [Store];
//     [Options] carry the game's constants, its [Generator] and its pixel
//     [Layer]s ([Options.Layers]: which are kept, and the default of those
//     a record does not hold), how
//     chunks are encoded ([Options.Encoding]), and choose what Open opens: the newest
//     generation, a given one ([Options.Generation]), the one a root
//     describes ([Options.Root]: the header slot a save directory's
//     manifest keeps), read-only ([Options.ReadOnly]: without a Generator,
//     for inspection, no generator version checked), or a damaged file for
//     repair ([Options.Repair]: no header, no generator needed).
//   - Chunk keys have 2, 3 or 4 int32 axes, fixed per store
//     ([Options.Axes], which [Store.Options] reports): a [Pos] or a [Key] of 2 axes
//     ([Key2]), or a [Key] of 3 or 4 ([Key3], [Key4]) given to the methods
//     ending in Key ([Store.GetKey], [Batch.PutChunkKey], ...); a
//     [KeyGenerator] generates the chunks of a store of 3 or 4 axes. A key
//     of other axes is refused with [ErrAxes]. [Store.EntriesIn] lists
//     every stored chunk in a [Box] without visiting the whole index.
//   - [Store.Get] loads one chunk by random access (one record read),
//     [Store.Entities] what is kept with it besides its pixels (an
//     [EntityBlock]: its [Body] set and its entity sections), [Store.Bodies]
//     the bodies alone; all are safe from any goroutine, also while a commit
//     runs.
//   - [Store.NewBatch] collects [Batch.PutChunk] (or [Batch.PutChunkFrom], a
//     [PixelSource] read while Commit compresses; [Batch.PutChunkExtra] and
//     an [ExtraSource] add the game's extra data for the chunk, which
//     [Store.GetExtra] returns), [Batch.DeleteChunk] and
//     [Batch.PutEntities]; [Store.Commit] makes them durable as generation+1
//     and returns [CommitStats].
//   - [Store.CompactNext] compacts data file by
//     data file, each step a commit whose cost is one file;
//     [Store.NeedsCompaction] says when dead bytes pass
//     [Options.CompactionThreshold].
//     [Store.Compact] rewrites everything in place, [Store.CompactTo] into
//     a new store.
//   - [Options.DataFileSize] bounds the data files.
//   - [Store.Check] returns a [Report] of every damaged item;
//     [Store.Entries] lists what the store holds.
//   - What only the module's save directory and tools need (data-file
//     names, roots, raw records, a forward scan of a damaged file, the
//     mark a failed save reverts to) is in its internal/storetool.
//
// # File layout
//
// Everything is little-endian. The sizes and offsets below are part of the
// file format.
//
//	chunks.pxsw                     chunks-data-<n>.pxsd, n = 1, 2, ...
//	offset 0   ┌───────────────┐    offset 0  ┌──────────────────────────────┐
//	           │ header slot A │              │ data file header (64 B)      │
//	offset 64  ├───────────────┤    offset 64 ├──────────────────────────────┤ records, appended
//	           │ header slot B │              │ record: chunk (Full | Delta) │
//	offset 128 └───────────────┘              │ record: body block           │
//	 (format 1: records follow,               │ record: journal segment      │ ◄─ end of one commit
//	  as in a data file)                      │ record ...                   │
//	                                          │ record: checkpoint           │ now and then: the whole table
//	                                          │ record: journal segment      │ ◄─ a slot's table root
//	                                          └──────────────────────────────┘
//
// A store offset names a file and a place in it: its high bits (>> 40) are
// the data file's number, 0 meaning the store file, the low 40 bits the
// offset within the file. Record handles,
// page-table entries, the chain's prev pointers and a slot's table root
// are store offsets. A commit appends to the newest data file; when a
// record would take it past [Options.DataFileSize], the next one starts (a
// larger record gets one of its own). A data file's header is 64 bytes:
//
//	off size field
//	  0  4   magic "PXSD"
//	  4  2   format version (3; 2 in data files of format 2)
//	  6  2   flags (0)
//	  8  4   data file number
//	 12  4   CRC32-C of the other 60 bytes
//	 16  8   world seed, and
//	 24  8   creation time of the store: a data file of another store is refused
//	 32 32   reserved (0)
//
// A header slot is 64 bytes. The fields marked * hold what two slots in an
// append-only file need, in the places a single fixed header would keep a
// page-table size, a data-region pointer and an entity-section pointer:
//
//	off size field
//	  0  4   magic "PXSW" (the bytes; 0x50585357 read big-endian)
//	  4  2   format version (3; 2 and 1 in stores of those formats)
//	  6  2   flags: bit 0 = records may be LZ4 (always set); format 3:
//	         bits 1..2 = axes of a chunk key minus 2, bit 3 = records may
//	         be encrypted (Options.Key); others 0
//	  8  8   world seed
//	 16  8   creation time, unix seconds
//	 24  8   modified time: when this slot's commit ran
//	 32  4   chunk count at this generation
//	 36  4 * CRC32-C of the slot's other 60 bytes (no table size: the
//	         table is a chain of records that carry their own lengths)
//	 40  8 * table root: store offset of this generation's newest
//	         page-table record, 0 = empty
//	 48  2   chunk size   (pixels per edge)
//	 50  2   tile size
//	 52  1   pixel size   (4)
//	 53  8 * generation (no entity-section pointer; see "Pixel bodies")
//	 61  3 * generator version, 24 bits
//
// Generation g lives in slot g%2, so a commit always writes the slot that
// does not hold the generation it starts from. Opening checks the magic,
// then the version, then the checksum, each with its own error
// ([ErrBadMagic], [ErrVersion], [ErrChecksum]), then that the generation
// matches the slot. A slot of zeros was never written.
//
// Every record has a 24-byte header, so that a forward scan can check each
// record and find the next:
//
//	┌─────────┬─────────┬──────────────┬──────┬───────┬──────┬──────┬─────────┬──────────┬─────────┬───────────┐
//	│ size u32│ raw u32 │ key u64      │ kind │ codec │ flags│ crc8 │ crc32c  │ (flagged)│ payload │ key bytes │
//	└─────────┴─────────┴──────────────┴──────┴───────┴──────┴──────┴─────────┴──────────┴─────────┴───────────┘
//	  0         4         8              16     17      18     19     20        24                   24 + size
//
// size is the length in the file of the flagged parts and the payload, raw
// the payload's decoded length; key is the chunk position (x then y, int32
// each) for chunk and body records and the writing generation for
// page-table records; kind is a record kind (1 delta chunk, 2 full chunk, 3 body block, 4 journal segment, 5 checkpoint, 6 palette chunk); codec 0 stores the payload as
// is, 1 as one LZ4 block (only when that is smaller), 2 as one zstd frame
// of exactly raw bytes (written only by a compaction with
// Options.ZstdArchive, where smaller than the record it moved). The CRC-8 (SMBUS)
// covers bytes 0..18 and lets a scan skip garbage cheaply; the CRC32-C
// covers bytes 0..19 and everything after the header. A record is
// addressed by a handle {Offset, Length}, Length counting the header and
// the key bytes.
//
// flags (format 3; 0 before, and always 0 on table records) say what a
// record holds besides its payload; bits 0 and 1 (chunk records only) come
// between the header and the payload, never compressed, the key bytes
// after the payload:
//
//	bit 0     [layers u32]         the persisted-layer mask the pixels were written with
//	bit 1     [length u32][bytes]  the game's extra data for the chunk (at most MaxExtra)
//	bits 2..3 [z i32] ([w i32])    the key's axes beyond two (0 to 2; 3 is damage): 4 key bytes each
//
// A store of format 3 writes bit 0 on every chunk record, so that a layer
// the game registers later reads as its default in older records; a record
// without it (format 1 and 2) holds the layers the reader persists. A
// chunk or body record of a store of 3 or 4 axes carries its key's z (and
// w) after its payload, so that a forward scan recovers the whole key from
// the record alone; bits 2..3 must match the store's axes.
//
// Payloads by kind:
//
//   - Full (2): ChunkSize² pixels, little-endian uint32, row-major, masked.
//   - Delta (1): [count u32][position u24][pixel u32]… with
//     positions ascending: the pixels that differ from the Generator's
//     chunk. Possible while fewer than [Options.DeltaThreshold] of the
//     pixels differ. A count of 0 only in a record with extra data (a
//     chunk as generated that carries some).
//   - Palette (6, format 3): [count u32][width u8][0 0 0], the palette
//     (count pixels, u32 each), then one index per pixel, row-major: 8 bits
//     when count <= 256, else 16 (little-endian), count at most 65,536.
//   - A chunk is written in the smallest of the records that apply, after
//     compression, within 10%, found from estimates without compressing
//     every one ([EncodeSmallest]; [EncodeDeltaFull] picks as format 2
//     did). Empty chunks (all zero under the mask, no extra data) have no
//     record.
//   - Body block (3), a chunk's [EntityBlock]: [count u32][sections u32]
//     then per body a 64-byte header, the pixels (LZ4 or raw), the shape
//     mask (8 bools a byte, least significant bit first; LZ4 or raw) and the
//     extension bytes as given; then per entity section [length u32] and its
//     bytes (a PECS entity section of package archetype, kept as it is; the
//     record's CRC32-C covers it, and so does its own footer). The body
//     header's byte 60 is a CRC-8 of its other 63 bytes; byte 61 says which
//     sections are raw (bit 0 pixels, bit 1 mask). Blocks written before
//     entity sections have 0 where the section count is.
//   - Journal segment (4) and checkpoint (5): [prev u64][level u8][0 0 0]
//     [count u32] then count page-table entries.
//
// A page-table entry is 24 bytes:
//
//	off size field
//	  0  4   chunk x (int32)
//	  4  4   chunk y (int32)
//	  8  8   record: store offset (0 for Empty and deletions)
//	 16  4   record length
//	 20  1   storage type: 0 Empty, 1 Delta, 2 Full, 3 body block, 4 Palette; +0x80 = deleted
//	 21  1   CRC-8 of the other 23 bytes
//	 22  2   reserved (0)
//
// In a store of N = 3 or 4 axes an entry is 4N+16 bytes: the N axes
// (int32), then the record's store offset, its length, the storage type,
// the CRC-8 and the reserved bytes, in that order.
//
// # Page table: journal and checkpoints
//
// A commit does not rewrite the table. It appends one journal segment with
// the entries it changes (a deletion is an entry with the 0x80 bit, a
// tombstone) whose prev points at the previous segment; the chain ends at a
// checkpoint, a full table sorted by (y, x) ((w, z, y, x) with 4 axes:
// the last axis first), or at prev 0. Opening replays
// checkpoint then segments, oldest first: the latest entry per position
// wins: a journal-style table of contents. To keep that chain
// short, when 8 segments of one level would stand at its head the commit
// writes one segment of the next level instead, holding the newest entry
// of every position in them (a base-8 counter: opening reads at most 7 a
// level). Once the chain holds more than [Options.CheckpointRatio] of the
// table's entries (and at least 4096), the commit writes a checkpoint
// instead. Either way a commit writes exactly one page-table record, and
// its amortised size depends on what changed, not on the table.
//
// The runtime index is an open-addressing hash table keyed by position,
// 24 bytes a slot at most 3/4 full: 32 to 64 bytes per stored chunk (8
// bytes a slot more with 3 or 4 axes). Opening fills it from the
// checkpoint bucket by bucket of adjacent slots, and finds the records
// several entries share by a radix sort of their offsets, so that it costs
// the same per chunk at 1,000,000 chunks and at 10,000,000 (about 0.3 us
// of CPU a chunk here). A hash table has no order, so the
// first range query ([Store.EntriesIn]) builds a spatial tree beside it,
// seed 001's fixed 16-way split: each node halves its region on every
// axis (16 children with 4 axes, 8 with 3, 4 with 2) and a leaf holds at
// most 64 keys. A query reads the nodes whose region meets its box, takes
// the keys of a node inside the box without looking at them, and looks
// only at the keys of the leaves the box's faces cut: not the index, not
// the empty space of a sparse world. Commits keep the tree current. It
// holds about 20 bytes a key (16 of them the key) and builds in about 1 s
// of CPU for 10,000,000 keys here.
//
// # Pixel bodies
//
// An append-only file has no fixed end where one section of every body
// could live, so bodies are kept in body-block records, one per chunk that
// holds bodies (a body belongs to the chunk that holds its centre), each
// found through the page table by an entry of storage type 3 at that
// chunk's position. [Store.Bodies] thus reads one record, like [Store.Get],
// and the header needs no entity-section pointer.
//
// # Commit protocol
//
// [Store.Commit] compresses on [Options.Workers] goroutines, appends the
// chunk and body records and the page-table record to the newest data
// file after the end of every generation a slot still names (starting the
// next data file when it is full), fsyncs the data files written (and the
// directory when one was started), writes the header slot of generation+1
// and fsyncs it: two fsyncs (four when a data file starts, one for a
// commit that changes nothing). A header is written only over data that is
// already durable, so a crash at any point leaves the old generation, or
// the new one once the last fsync is done. A commit that fails is taken
// back: the data file it appended to is cut to its size before, the data
// files it started are removed, a header slot it wrote is written back.
//
// [Open] with [Options.Generation] opens the generation a save directory's manifest names even when
// the other slot already holds a newer one. Its next commit replaces that
// newer slot (same parity) but appends after the newer generation's data,
// so until the new header is durable both the manifest's generation and
// the abandoned newer one stay whole; the abandoned data is dead space
// that compaction reclaims.
//
// # Compaction
//
// [Store.CompactNext] empties the data file with the most dead bytes once
// the dead bytes of all data files pass [Options.CompactionThreshold] of
// their size (and 16 KiB): a commit that copies the file's live records
// byte for byte to the newest data file (the next one when it empties the
// newest) and points their entries at the copies, replacing a checkpoint
// in the file by a new one and journal segments in it, with every newer
// one, by one merged segment. Its cost is what the file holds, not the
// world. The emptied file stays for the generations before; a save
// directory removes it once no manifest names a generation that uses it.
// (A store of format 1 keeps its records in the store file: compaction
// moves them out, but only [Store.Compact] or [Store.CompactTo] give the
// space back.)
//
// [Store.Compact] moves every live record (in page-table order, shared
// records once) to new data files with a fresh checkpoint, as generation+1,
// writes the other slot with the previous generation over the same table
// (so that Open with Options.Generation of it opens, with the same
// contents), and removes every data file neither slot uses.
// [Store.CompactTo] writes the same to a new store.
//
// # Damage
//
// Every byte read is checked before it is trusted; lengths and counts are
// checked against what remains before anything is allocated. A damaged
// header slot falls back to the other; both damaged is [ErrNoValidHeader].
// A damaged page-table record makes Open rebuild the index by scanning the
// records up to that generation's end (chunk and body records carry their
// position; journal segments and checkpoints are replayed where they
// occur, damaged ones entry by entry), which also recovers everything
// before the cut of a truncated file; [Store.OpenReport] lists what was
// skipped. A data file that is missing, cut short or another store's is
// reported with its name. A damaged chunk record makes [Store.Get] return
// [ErrCorrupt] with the file and offset, and the generated chunk.
// [Store.Check] reports every damaged item.
//
// The chunk dictionary: a chunk or body record, of any kind and size,
// whose payload equals one the generation uses (uniform chunks, a region
// painted with one material, the same delta at several positions) is not
// written again; entries share the record ([Options.Dictionary]). A shared
// Delta record is applied to the generated chunk of each entry's own
// position.
//
// [docs/format.md] is the reference of the file formats (this one, the PECS
// world file and the save directory), with their versions ([FormatVersion],
// [OldestFormatVersion]) and what this module promises about reading older
// files.
//
// [docs/format.md]: https://github.com/arksave/arksave/blob/main/docs/format.md
package chunkstore
