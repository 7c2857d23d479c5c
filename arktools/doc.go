// Package arktools runs arksave under ark-tools' real scheduler (github.com/mlange-42/ark-tools,
// app.App), in a module of its own so that the library's go.mod stays free of ark-tools.
//
// Its tests start an app.App with the plugin's systems, save, and load the save in a new process:
// the game-state resources app.App adds (resource.Tick, resource.Rand with its *rand.PCG) and the
// game's own come back exactly, and the scheduler's bookkeeping (app.Systems,
// resource.Termination) is left out by the plugin's default (arksave.SchedulerResources). The
// package's Example shows the set-up.
package arktools
