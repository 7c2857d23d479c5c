// Package sim assembles the demo's world, wires arksave into it, and runs it
// without a window.
//
// # Outline
//
//   - [Sim]: the ECS world (chunks, the camera's Focus, the [Clock],
//     resources) and its systems in order: [Tools] (the player's
//     [Commands]: camera, brush, bodies), arksave's streaming system,
//     bodies.System, sand.System, then arksave's save system.
//     [Sim.Step] advances one fixed tick and never reads the clock for the
//     simulation. [New] installs the arksave plugin ([SaveConfig]: a new
//     world in the save directory, or its last save continued);
//     [Sim.Load] reloads the last save (F9) and re-initializes the systems;
//     [Sim.Close] makes the final save.
//   - [Persistence]: the demo's face of arksave: Save (F5), SaveAs (F6),
//     and [SaveStatus], the figures of the overlay and of the stats.
//   - [Script]: the scripted player of headless runs and of -autoplay.
//   - [RunHeadless]: the headless run, and [Stats], its one JSON line.
package sim
