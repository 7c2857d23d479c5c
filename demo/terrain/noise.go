package terrain

import "github.com/arksave/arksave/demo/internal/rng"

// Noise in 16.16 fixed point. The generator must give the same pixels on
// every machine, because saves store chunks as deltas against it: integer
// arithmetic cannot be fused or reordered the way floating point may be.

const one = 1 << 16 // 1.0 in 16.16

// hash2 hashes a lattice point under a seed.
func hash2(seed uint64, x, y int) uint64 {
	return rng.Mix(seed ^ uint64(x)*0x9E3779B97F4A7C15 ^ uint64(y)*0xD1B54A32D192ED03)
}

// pixHash is a cheap per-pixel hash for colour jitter and ragged edges.
func pixHash(seed uint32, x, y int) uint32 {
	h := uint32(x)*0x9E3779B1 + uint32(y)*0x85EBCA77 + seed
	h ^= h >> 15
	h *= 0x2C1B3C6D
	h ^= h >> 12
	h *= 0x297A2D39
	h ^= h >> 15
	return h
}

// floorDiv returns floor(a/b) and the remainder in [0, b) for b > 0.
func floorDiv(a, b int) (q, r int) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

// fade is smoothstep, 3t^2 - 2t^3, for t in [0, one].
func fade(t int) int {
	return t * t / one * (3*one - 2*t) / one
}

func lerp(a, b, t int) int { return a + (b-a)*t/one }

// lattice1 is the random value of lattice point i, in [-one, one).
func lattice1(seed uint64, i int) int {
	return int(hash2(seed, i, 0x51a7)&(2*one-1)) - one
}

// value1 is 1D value noise with the given wavelength in pixels, in [-one, one).
func value1(seed uint64, x, wavelength int) int {
	i, r := floorDiv(x, wavelength)
	t := fade(r * one / wavelength)
	return lerp(lattice1(seed, i), lattice1(seed, i+1), t)
}

// grad2 is the dot product of lattice point (i, j)'s gradient with the
// offset (dx, dy), both in 16.16.
func grad2(seed uint64, i, j, dx, dy int) int {
	switch hash2(seed, i, j) & 7 {
	case 0:
		return dx
	case 1:
		return -dx
	case 2:
		return dy
	case 3:
		return -dy
	case 4:
		return (dx + dy) * 181 / 256 // 1/sqrt(2)
	case 5:
		return (dx - dy) * 181 / 256
	case 6:
		return (-dx + dy) * 181 / 256
	default:
		return (-dx - dy) * 181 / 256
	}
}

// gradient2 is 2D gradient (Perlin) noise with square cells of the given
// size in pixels, roughly in [-0.7, 0.7] * one.
func gradient2(seed uint64, x, y, cell int) int {
	i, rx := floorDiv(x, cell)
	j, ry := floorDiv(y, cell)
	fx, fy := rx*one/cell, ry*one/cell
	u, v := fade(fx), fade(fy)
	a := lerp(grad2(seed, i, j, fx, fy), grad2(seed, i+1, j, fx-one, fy), u)
	b := lerp(grad2(seed, i, j+1, fx, fy-one), grad2(seed, i+1, j+1, fx-one, fy-one), u)
	return lerp(a, b, v)
}
