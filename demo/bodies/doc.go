// Package bodies is the demo's pixel bodies: rigid bodies made of pixels (a
// wooden crate, a lump of rock) that fall, turn, float or sink, come to rest,
// and are drawn into the world's pixels where they are.
//
// # Outline
//
//   - [New] makes a body ([Crate] or [Rock]) as a components.PixelBody; its
//     kind is kept in the body's Extension, so it survives saves.
//   - [System] steps every body each tick, in order of their ids: gravity,
//     buoyancy and drag, movement and turning in sub-steps against the solid
//     pixels of the world, then, if its [Transform] changed, it erases the
//     body's pixels and writes them at the new transform with
//     components.FlagPixelBody, and stores that blitted transform in
//     PixelBody.X, Y and Rotation. [Motion] keeps the rest of the physics
//     state. A body at rest sleeps and writes nothing; a body whose centre is
//     in no loaded chunk stops.
//   - [Erase] and [Fits] serve the tools (digging bodies away, dropping new
//     ones).
//
// Rotations are quantised to 1/256 of a turn and applied in fixed point, so
// the pixels a body covers at a blitted transform are the same on every
// machine, and a reloaded body erases exactly the pixels it wrote.
package bodies
