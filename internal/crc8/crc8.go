// Package crc8 computes the 8-bit CRC that guards page-table entries and
// pixel-body records in the chunk store: CRC-8/SMBUS (polynomial 0x07,
// initial value 0, no reflection, no final xor). Its check value, the CRC of
// "123456789", is 0xF4. The choice is part of the file format.
package crc8

// Poly is the generator polynomial x^8 + x^2 + x + 1.
const Poly = 0x07

var table = makeTable()

func makeTable() (t [256]byte) {
	for i := range t {
		c := byte(i)
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ Poly
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}

// Checksum returns the CRC-8 of data.
func Checksum(data []byte) byte { return Update(0, data) }

// Update returns the CRC-8 of data appended to input whose CRC is crc.
func Update(crc byte, data []byte) byte {
	for _, b := range data {
		crc = table[crc^b]
	}
	return crc
}
