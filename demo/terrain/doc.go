// Package terrain is the procedural generator of the demo world: the pixels
// a chunk has before anybody touched it, and what saves store deltas against.
//
// # Outline
//
// [Generator] has the method set arksave's streaming expects of a generator:
// Version() uint32 and Generate(x, y int32, seed uint64, dst []uint32).
// Generate is pure and deterministic (integer noise only, no floating point
// in the pixel path), keeps no state, and so is safe for concurrent use by
// the save writer, which regenerates chunks to compute deltas.
//
// The world, y growing downwards: sky above a rolling surface ([SurfaceY])
// with mountains; lakes fill valleys below [WaterLevel]; the ground is a top
// layer of grass (sand in deserts, on beaches and lake beds, bare stone on
// high peaks) over dirt over stratified stone; winding tunnels and caverns
// open below the dirt; coal, and deeper gold, is scattered through the stone;
// trees of wood and leaves grow on dry grass. The colour layer of every pixel
// carries a shade that varies per pixel.
//
// A freshly generated chunk is at rest under the sand package's rules: sand
// lies only where it cannot slide and water only where it is held, so loading
// a chunk neither wakes the simulation for long nor marks the chunk dirty.
package terrain
