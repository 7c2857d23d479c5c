package game

import "math"

var sinTable, cosTable [64]float64

func init() {
	for k := range 64 {
		sinTable[k], cosTable[k] = math.Sincos(float64(k) * 2 * math.Pi / 64)
	}
}
