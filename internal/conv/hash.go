package conv

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/arksave/arksave/components"
)

var seed = maphash.MakeSeed()

// HashBodies returns a hash of a body set that changes whenever anything
// that is saved of a body changes. The plugin compares it with the hash of
// the last committed set to write only the body sets that changed. The hash
// is stable within a process only.
func HashBodies(bodies []components.PixelBody) uint64 {
	if len(bodies) == 0 {
		return 0
	}
	var h maphash.Hash
	h.SetSeed(seed)
	var buf [8]byte
	u64 := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	f32 := func(v float32) { u64(uint64(math.Float32bits(v))) }
	for i := range bodies {
		b := &bodies[i]
		u64(uint64(b.ID))
		f32(b.X)
		f32(b.Y)
		f32(b.Rotation)
		f32(b.VX)
		f32(b.VY)
		f32(b.AngularVelocity)
		u64(uint64(b.Width)<<32 | uint64(b.Height))
		u64(uint64(uint32(b.OriginX))<<32 | uint64(uint32(b.OriginY)))
		for _, p := range b.Pixels {
			binary.LittleEndian.PutUint32(buf[:4], uint32(p))
			h.Write(buf[:4])
		}
		for _, s := range b.Shape {
			if s {
				h.WriteByte(1)
			} else {
				h.WriteByte(0)
			}
		}
		u64(uint64(len(b.Extension)))
		h.Write(b.Extension)
	}
	return h.Sum64() | 1 // never 0, which means "no bodies"
}
