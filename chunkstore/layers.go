package chunkstore

import "fmt"

// Layer is one layer of the game's pixels: a run of bits of the 32-bit
// pixel (material, colour, damage, a flag, ...), registered with
// [Options.Layers]. The store keeps the layers whose Persist is set and
// nothing else; when it reads a chunk, a layer that its record does not
// hold (a layer the game did not persist, or one it registered after the
// record was written) reads as its Default.
type Layer struct {
	// Name identifies the layer in messages; unique, not empty.
	Name string
	// Offset is the layer's lowest bit in the pixel, Bits its width:
	// Offset+Bits <= 32, Bits >= 1. Layers do not overlap.
	Offset, Bits uint8
	// Persist keeps the layer in the store.
	Persist bool
	// Default is the layer's value (in its own bits, not shifted) where a
	// record does not hold it; at most 1<<Bits - 1.
	Default uint32
}

// Mask returns the bits of a pixel that the layer occupies.
func (l Layer) Mask() uint32 {
	if l.Bits >= 32 {
		return ^uint32(0) << l.Offset
	}
	return (1<<l.Bits - 1) << l.Offset
}

// LayerMask returns the bits of the persisted layers: what a store with
// these layers keeps of a pixel.
func LayerMask(layers []Layer) uint32 {
	var m uint32
	for _, l := range layers {
		if l.Persist {
			m |= l.Mask()
		}
	}
	return m
}

// keptBits returns the bits of a pixel a store with these layers keeps:
// every bit without layers.
func keptBits(layers []Layer) uint32 {
	if len(layers) == 0 {
		return ^uint32(0)
	}
	return LayerMask(layers)
}

// checkLayers checks registered layers and returns their persisted mask.
func checkLayers(layers []Layer) (uint32, error) {
	var used uint32
	names := make(map[string]bool, len(layers))
	for i, l := range layers {
		switch {
		case l.Name == "" || names[l.Name]:
			return 0, fmt.Errorf("%w: layer %d: name %q empty or used twice", ErrInvalidConfig, i, l.Name)
		case l.Bits == 0 || int(l.Offset)+int(l.Bits) > 32:
			return 0, fmt.Errorf("%w: layer %q: bits %d..%d outside a 32-bit pixel", ErrInvalidConfig, l.Name, l.Offset, int(l.Offset)+int(l.Bits))
		case l.Mask()&used != 0:
			return 0, fmt.Errorf("%w: layer %q overlaps another layer (bits %#08x)", ErrInvalidConfig, l.Name, l.Mask()&used)
		case l.Bits < 32 && l.Default>>l.Bits != 0:
			return 0, fmt.Errorf("%w: layer %q: default %d does not fit in %d bits", ErrInvalidConfig, l.Name, l.Default, l.Bits)
		}
		names[l.Name] = true
		used |= l.Mask()
	}
	m := LayerMask(layers)
	if m == 0 {
		return 0, fmt.Errorf("%w: no layer is persisted", ErrInvalidConfig)
	}
	return m, nil
}

// fillLayers gives every registered layer that a record read with x does
// not hold its default in dst.
func (cc *chunkCodec) fillLayers(dst []uint32, x recordExt) {
	if cc.layers == nil {
		return
	}
	held := cc.mask
	if x.hasLayers {
		held &= x.layers
	}
	var clearBits, set uint32
	for _, l := range cc.layers {
		if m := l.Mask(); m&held != m {
			clearBits |= m
			set |= l.Default << l.Offset
		}
	}
	if set == 0 && clearBits&cc.mask == 0 {
		return // those bits are zero already: every read masks with cc.mask
	}
	for i := range dst {
		dst[i] = dst[i]&^clearBits | set
	}
}
