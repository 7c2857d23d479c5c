package systems

import "github.com/arksave/arksave/autosave"

// handle tracks one requested save. Several requests made while a save is
// running share the next save and its handle.
type handle struct {
	rt   *runner
	done chan struct{}
	res  *autosave.Result
}

func (r *runner) newHandle() *handle { return &handle{rt: r, done: make(chan struct{})} }

func (h *handle) complete(res *autosave.Result) {
	h.res = res
	close(h.done)
}

// IsComplete reports whether the save has finished, successfully or not.
func (h *handle) IsComplete() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// Done returns a channel that is closed when the save has finished.
func (h *handle) Done() <-chan struct{} { return h.done }

// Wait finishes the save on the calling goroutine, which must be the game
// loop's, between ticks: a save not started yet is started now (its
// snapshot taken), and the commit is waited for. It cannot deadlock: it
// never waits for a tick that only its caller could run.
func (h *handle) Wait() *autosave.Result {
	if !h.IsComplete() {
		h.rt.WaitSave()
	}
	if !h.IsComplete() {
		// Not started: this request waits for the next save. Start it.
		h.rt.requested = true
		h.rt.start()
		h.rt.WaitSave()
	}
	return h.res
}

// Result returns the save's result once it is complete, nil before.
func (h *handle) Result() *autosave.Result {
	if !h.IsComplete() {
		return nil
	}
	return h.res
}
