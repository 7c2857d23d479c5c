package chunkstore

import (
	"encoding/binary"

	"github.com/arksave/arksave/internal/pxsw"
)

// Choosing a chunk's record without compressing it every way.
//
// Compressing a 512x512 chunk costs more than everything else a save does
// with it (about 1.7 ms Full, half that as a Palette with its table built,
// a few microseconds for the Delta of a chunk 1% off its base), so the
// smallest record is found from what is known before compressing:
//
//   - a Delta's payload is 4+7*diff bytes, and compression never makes it
//     larger (compressInto stores it as is then) nor, in practice, smaller
//     than 40% of that;
//   - a chunk diff pixels off its generated base compresses without Delta
//     to about what the base itself does, give or take what the changed
//     pixels carry: a run of changed pixels adds or removes at most its
//     pixels' bytes and one LZ4 sequence (a token and an offset). The
//     base's size is measured once, the first time a chunk at its position
//     is encoded, on an eighth of its pixels (basePlain), and kept with the
//     base in the cache.
//
// The likelier winner is compressed first; the other only when its
// estimate could beat it by more than 10%.

const (
	// deltaFloorPct: LZ4 leaves at least this percentage of a Delta
	// payload (entries of 7 bytes, increasing positions; 57% seen for
	// contiguous runs, 85-100% for scattered pixels).
	deltaFloorPct = 40
	// seqCost is the bytes an LZ4 sequence costs besides its literals: a
	// token and a match offset.
	seqCost = 3
	// closePct: a record is tried after another unless its estimate is
	// at least 100/110 of the other's size (the choice stays within 10%
	// of the smallest).
	closePct = 110
)

// pick keeps the smallest record tried: the kept one in e.recs, the next
// built in e.alt (see encoder.seal).
type pick struct {
	e   *encoder
	res chunkResult
}

func (p *pick) try(typ StorageType, rec []byte) {
	if p.res.rec == nil || len(rec) < len(p.res.rec) {
		p.res.typ, p.res.rec = typ, rec
		p.e.recs, p.e.alt = p.e.alt, p.e.recs
	}
}

// payload returns the payload bytes of the record kept, 0 for none.
func (p *pick) payload(pos Key) int {
	if p.res.rec == nil {
		return 0
	}
	return len(p.res.rec) - recordHeaderSize - len(p.e.ext) - keyExtSize(int(pos.n))
}

// encodePlain tries the records of pix that do not need a base: Palette
// when it applies, and Full when there is no palette, when the palette's
// header and table are a quarter of its record or more (many distinct
// pixels, or a small chunk), or when LZ4 made the palette 8 times smaller
// or more: its greedy matches then find the long repeats of a Full record's
// 4-byte pixels better than those of one-byte indices (squares of a few
// colours: Full 2.4 times smaller). Otherwise the Palette record, the Full
// record's pixels in one or two bytes each, is the smaller (2 to 2.5 times
// on terrain).
func (cc *chunkCodec) encodePlain(p *pick, pos Key, pix []uint32) {
	e := p.e
	rec, ok := e.encodePalette(pos, pix, cc.mask)
	if !ok {
		p.try(Full, e.encodeFull(pos, pix, cc.mask))
		return
	}
	p.try(Palette, rec)
	if fullMayWin(e.pal.count, len(pix), p.payload(pos)) {
		p.try(Full, e.encodeFull(pos, pix, cc.mask))
	}
}

// fullMayWin reports whether a Full record may be smaller than a Palette
// one of count distinct pixels among npix whose compressed payload is
// payload bytes (see encodePlain).
func fullMayWin(count, npix, payload int) bool {
	head := paletteHeadSize + 4*count
	return 4*head >= payload || 8*payload <= head+paletteWidth(count)*npix
}

// chooseRecord keeps in p the smallest record of pix at pos, a chunk with
// ch.diff pixels off base and a Delta under the threshold, within 10%,
// compressing as few records as the estimates allow (see the top of this
// file).
func (cc *chunkCodec) chooseRecord(p *pick, pos Key, pix []uint32, base *baseEntry, ch chunkChanges) {
	e := p.e
	rawDelta := deltaCountSize + deltaEntrySize*ch.diff
	delta := func() { p.try(Delta, e.deltaOf(pos, pix, base.pix, cc.mask, ch)) }
	if ch.diff == 0 || 256*rawDelta < cc.npix {
		// LZ4 shrinks at most 255 to 1: no record of npix pixels is
		// smaller than this Delta even uncompressed (nor than an empty
		// one, of a chunk as generated with extra data).
		delta()
		return
	}
	lo, est := cc.plainEstimate(e, base, ch)
	if closePct*lo >= 100*rawDelta {
		// Even uncompressed, the Delta is within 10% of the least the
		// chunk could take another way.
		delta()
		return
	}
	deltaEst := rawDelta * (57 + 33*ch.runs/ch.diff) / 100
	if deltaEst <= est {
		delta()
		if closePct*lo < 100*p.payload(pos) {
			cc.encodePlain(p, pos, pix)
		}
		return
	}
	cc.encodePlain(p, pos, pix)
	if closePct*(rawDelta*deltaFloorPct/100) < 100*p.payload(pos) {
		delta()
	}
}

// laidMaxDiv: scanChanges lays out a chunk's Delta payload while at most
// 1/laidMaxDiv of its pixels differ (a buffer of 7/16 byte a pixel); a
// chunk with more changes is scanned again if its Delta is tried.
const laidMaxDiv = 16

// scanChanges compares pix&mask with gen, a masked generated chunk, in one
// pass, and lays out the Delta payload of the changes in e.delta on the way
// while few pixels differ: the Delta a chunk a player worked in gets (the
// record most saves write) then costs no second pass over the chunk.
func (e *encoder) scanChanges(pix, gen []uint32, mask uint32) chunkChanges {
	limit := len(pix) / laidMaxDiv
	if n := deltaCountSize + deltaEntrySize*limit; cap(e.delta) < n {
		e.delta = make([]byte, n)
	}
	raw := e.delta[:cap(e.delta)]
	gen = gen[:len(pix)]
	diff, runs := 0, 0
	var any uint32 // the bits of every pixel: a count of nonzero pixels would cost a branch a pixel
	at := deltaCountSize
	was := false
	for i, p := range pix {
		p &= mask
		any |= p
		if p == gen[i] {
			was = false
			continue
		}
		if !was {
			runs++
			was = true
		}
		if diff < limit {
			putDeltaEntry(raw[at:at+deltaEntrySize], i, p)
			at += deltaEntrySize
		}
		diff++
	}
	return chunkChanges{diff: diff, runs: runs, nonzero: any != 0, laid: diff <= limit}
}

// putDeltaEntry writes the Delta entry of pixel i, now p, into d (7 bytes).
func putDeltaEntry(d []byte, i int, p uint32) {
	d = d[:deltaEntrySize]
	d[0], d[1], d[2] = byte(i), byte(i>>8), byte(i>>16)
	binary.LittleEndian.PutUint32(d[3:], p)
}

// deltaOf builds the Delta record of pix at pos, ch.diff pixels off gen, in
// e.alt: from the payload scanChanges laid out, else by scanning again.
func (e *encoder) deltaOf(pos Key, pix, gen []uint32, mask uint32, ch chunkChanges) []byte {
	if !ch.laid {
		return e.encodeDelta(pos, pix, gen, mask, ch.diff)
	}
	raw := e.delta[:deltaCountSize+deltaEntrySize*ch.diff]
	binary.LittleEndian.PutUint32(raw, uint32(ch.diff))
	return e.seal(pxsw.RecordDelta, pos, raw)
}

// plainEstimate returns the least and the likely compressed payload of a
// chunk ch.diff pixels off base stored without Delta.
func (cc *chunkCodec) plainEstimate(e *encoder, base *baseEntry, ch chunkChanges) (lo, est int) {
	ps := cc.plainOf(e, base)
	width := 4
	if ps.typ == Palette {
		width = paletteWidth(ps.count)
	}
	// What the changed pixels can take away or add: their bytes and one
	// sequence per run.
	carried := width*ch.diff + seqCost*ch.runs
	lo = max(ps.payload-carried, width*cc.npix/255)
	est = ps.payload
	if ps.typ == Palette && paletteWidth(ps.count+ch.diff) > width {
		// The new pixels may widen the indices: the estimate doubles.
		est *= 2
	}
	return lo, est
}

// plainOf returns the size of base's own record without Delta, measuring
// it the first time (a compression or two, counted in e.compressions, as
// encodePlain chooses). A base of sampleMinPix pixels or more is measured
// on a sample of it (see basePlain).
func (cc *chunkCodec) plainOf(e *encoder, base *baseEntry) plainSize {
	if ps := base.plain.Load(); ps != nil {
		return *ps
	}
	ps := e.basePlain(base.pix)
	base.plain.Store(&ps)
	return ps
}

const (
	// sampleMinPix: a base of this many pixels or more is measured on
	// sampleSpans spans of 1/sampleDiv of its pixels each, spread evenly
	// (8 bands of 8 rows of a 512x512 chunk): an eighth of the palette
	// build and of the compression, where a chunk's first save spent
	// more on measuring its base than on its own record.
	sampleMinPix = 1 << 16
	sampleSpans  = 8
	sampleDiv    = 64
)

// basePlain measures the smallest record without Delta of pix, a masked
// generated chunk: on all of it when it is small, else on a sample, scaled
// up. The sample keeps whole rows, so LZ4 finds in it the repeats from row
// to row it finds in the chunk; the palette's table is counted once.
func (e *encoder) basePlain(pix []uint32) plainSize {
	if len(pix) < sampleMinPix {
		return e.measurePlain(pix, 1)
	}
	span, stride := len(pix)/sampleDiv, len(pix)/sampleSpans
	sample := e.pal.sample[:0]
	for k := range sampleSpans {
		sample = append(sample, pix[k*stride:k*stride+span]...)
	}
	e.pal.sample = sample
	return e.measurePlain(sample, len(pix)/len(sample))
}

// measurePlain measures the smallest record without Delta of pix (a whole
// chunk, or a sample of 1/scale of one) and returns its payload scaled to
// the chunk.
func (e *encoder) measurePlain(pix []uint32, scale int) plainSize {
	ps := plainSize{typ: Full}
	full := true
	if e.pal.build(pix, ^uint32(0)) { // pix is masked already
		ps.typ, ps.count = Palette, e.pal.count
		table := paletteHeadSize + 4*ps.count
		ps.payload = table + max(0, e.compressedLen(e.paletteRaw(len(pix)))-table)*scale
		full = fullMayWin(ps.count, len(pix)*scale, ps.payload)
	}
	if full {
		if n := e.compressedLen(e.fullRaw(pix, ^uint32(0))) * scale; ps.typ == Full || n < ps.payload {
			ps = plainSize{payload: n, typ: Full}
		}
	}
	return ps
}

// compressedLen returns the bytes of raw's payload in a record: compressed
// when that is smaller, else as is. It uses e.alt as scratch.
func (e *encoder) compressedLen(raw []byte) int {
	e.compressions++
	rec, _ := compressInto(e.alt[:0], &e.c, nil, raw)
	e.alt = rec[:0]
	return len(rec) - recordHeaderSize
}
