// Package bench holds benchmarks that compare arksave with its peers.
// It is a module of its own so that peers stay out of the library's go.mod.
package bench
