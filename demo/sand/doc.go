// Package sand holds the demo's materials and its falling-sand cellular
// automaton. It needs no window: its tests run headless.
//
// # Outline
//
//   - [Materials]: the material table (name, [Kind], density, flammability,
//     burn rate, colour ramp), indexed by [Material], the pixel's material byte.
//   - [Field]: the loaded pixel world as systems see it during a tick, across
//     chunk borders (found through the ChunkIndex resource). Writes mark a
//     chunk dirty only when a pixel really changes and wake the tiles around.
//   - [Tiles]: per chunk, which 32x32 tiles are awake. Only awake tiles are
//     simulated; a world at rest costs next to nothing.
//   - [System]: the automaton, an ark-tools style system (Initialize, Update,
//     Finalize). Sand falls and piles; water and oil fall, flow towards the
//     nearest place to fall and level; wood, leaves, coal and oil burn;
//     fire rises and dies into smoke; smoke and steam rise and fade; water
//     puts fire out into steam.
//
// # Pixels
//
// A pixel's material byte is a [Material]; its colour byte is a shade along
// the material's colour ramp; its damage byte is how far a solid has burned,
// or how old a flame or gas is. The flag byte's [components.FlagPixelBody]
// marks pixels that belong to a pixel body: the automaton treats them as a
// wall and never moves them. No other flag is used, so nothing the
// simulation needs is lost when only the persisted layers of
// arksave.DefaultLayers (the bits of [components.PersistMask]) are saved;
// the heat layer ([components.Chunk.Heat]) is never saved.
//
// # Determinism
//
// The automaton visits chunks bottom row first, tiles and rows bottom-up,
// alternating the horizontal direction per row and tick, and draws its
// randomness from a xorshift64* stream seeded by [System.Seed]; the same
// world, seed and inputs give the same pixels.
package sand
