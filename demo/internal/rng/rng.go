// Package rng holds the demo's deterministic randomness: a hash finaliser
// and a small seeded generator. Nothing in the simulation reads the clock or
// math/rand, so a seed and the player's input decide every pixel.
package rng

// Mix is the 64-bit finaliser of MurmurHash3: a well-spread hash of h.
func Mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Rand is a xorshift64* generator. The zero value is not usable; use New.
type Rand struct{ state uint64 }

// New returns a generator seeded by seed; different seeds give different
// streams.
func New(seed uint64) Rand { return Rand{state: Mix(seed) | 1} }

// Next returns the next number of the stream.
func (r *Rand) Next() uint64 {
	x := r.state
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	r.state = x
	return x * 2685821657736338717
}
