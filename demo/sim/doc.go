// Package sim assembles the demo's world and runs it without a window.
//
// # Outline
//
//   - [Sim]: the ECS world (chunks, the camera's Focus, resources) and its
//     systems in order: [Tools] (the player's [Commands]: camera, brush,
//     bodies), the streamer (the stand-in stream.System until arksave's
//     streaming replaces it), bodies.System, sand.System, then
//     [Config].After (arksave's dirty tracking, snapshot and autosave).
//     [Sim.Step] advances one fixed tick and never reads the clock.
//   - [Script]: the scripted player of headless runs and of -autoplay.
//   - [Persistence]: what the game asks of its save system (F5, F6 Save As,
//     F9, the final save, the overlay's save status); [Unsaved] stands in.
//   - [RunHeadless]: the headless run, and [Stats], its one JSON line.
package sim
