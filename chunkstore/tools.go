package chunkstore

import (
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// tools implements internal/storetool.Tools: what the save directory and
// the tools need of a store and a game does not. The methods are
// documented there.
type tools struct{}

// The descriptions of records that tools read, with this package's types.
type (
	deltaPixel  = pxsw.DeltaPixel
	rawChunk    = pxsw.RawChunk[Pos, Key, StorageType]
	recordDesc  = pxsw.RecordInfo[Pos, Key]
	scanRecord  = pxsw.ScanRecord[Pos, Key]
	filledChunk = pxsw.Filled[Pos, Key]
)

func init() { pxsw.Hook = tools{} }

// The two header slots are what a Mark keeps of the store file, a Handle
// splits store offsets as this package does, and data file headers are
// as long.
const _ = uint(pxsw.SlotsSize-dataStart) + uint(dataStart-pxsw.SlotsSize) +
	uint(pxsw.OffsetShift-fileShift) + uint(fileShift-pxsw.OffsetShift) +
	uint(pxsw.DataHeaderSize-dataHeaderSize) + uint(dataHeaderSize-pxsw.DataHeaderSize)

func (tools) DataFileName(store string, n uint32) string { return dataFileName(store, n) }

func (tools) ParseDataFileName(name string) (string, uint32, bool) {
	return parseDataFileName(name)
}

func (tools) StoreOffset(n uint32, offset int64) int64 { return storeOffset(n, offset&localMask) }

func (tools) ParseRoot(root []byte) (pxsw.RootInfo, error) { return parseRootInfo(root) }

func (tools) FindRoot(fsys vfs.FS, path string, gen uint64) ([]byte, error) {
	return findRoot(fsys, path, gen)
}

func (tools) NewestGeneration(fsys vfs.FS, path string) (uint64, error) {
	return newestGeneration(fsys, path)
}

func (tools) Verify(s *Store) Report { return s.verify() }

func (tools) Files(s *Store) []pxsw.FileStats    { return s.fileList() }
func (tools) DataFileNames(s *Store) []string    { return s.dataFileNames() }
func (tools) Stats(s *Store) pxsw.Stats          { return s.statistics() }
func (tools) Mark(s *Store) (pxsw.Mark, error)   { return s.markFiles() }
func (tools) Revert(s *Store, m pxsw.Mark) error { return s.revertTo(m) }

func (tools) Scan(fsys vfs.FS, path string, fn func(scanRecord) bool) error {
	return scanFile(fsys, path, fn)
}

func (tools) ScanRange(fsys vfs.FS, path string, from, to int64, fn func(scanRecord) bool) error {
	return scanRange(fsys, path, from, to, fn)
}

func (tools) WithDataPaths(o Options, paths map[uint32]string) Options {
	o.dataPaths = &dataPaths{paths: paths}
	return o
}

func (tools) CheckFile(fsys vfs.FS, path string, key []byte) Report {
	return checkFile(fsys, path, key)
}
func (tools) TypeCounts(types map[StorageType]int) string        { return typeCounts(types) }
func (tools) ReadRaw(s *Store, pos Pos) (rawChunk, bool, error)  { return s.readRaw(pos) }
func (tools) ReadRawKey(s *Store, k Key) (rawChunk, bool, error) { return s.readRawKey(k) }

func (tools) CompactFile(s *Store, n uint32) (CompactStats, error) { return s.compactFile(n) }

func (tools) Entries(s *Store, fn func(toolEntry) bool) { s.entries(fn) }

func (tools) RecordInfo(s *Store, h handle) (recordDesc, error) { return s.recordInfo(h) }

func (tools) Encrypted(s *Store, h handle) (bool, error) { return s.encrypted(h) }

func (tools) CompactToFilling(s *Store, path string, missing func(k Key) bool, fill ...*Store) (*Store, []filledChunk, error) {
	return s.compactToFilling(path, missing, fill...)
}

func (tools) ForPixelMigration(o Options) Options {
	o.pixelMigration, o.ReadOnly = true, true
	return o
}

func (tools) CheckPixels(s *Store) error { return s.checkPixels() }

func (tools) PixelSize(s *Store) int { return int(s.hdr.pixelSize) }

func (tools) SetPixelWriter(size int, widen func(uint32) uint64) (restore func()) {
	return setPixelWriter(size, widen)
}
