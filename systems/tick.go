package systems

// UpdateStream runs the streaming system's tick: chunks around every focus
// are requested and spawned, far ones unloaded.
func (r *runner) UpdateStream() {
	if !r.closed {
		r.tickStream()
	}
}

// UpdateSave runs the save system's tick: a finished save is applied, the
// autosave timer advances, and a save that is due starts.
func (r *runner) UpdateSave() { r.tickSave() }

// FinalizeSave runs when the save system is finalized: with SaveOnFinalize
// it waits for a running save and saves once more; otherwise nothing.
func (r *runner) FinalizeSave() {
	if r.cfg.SaveOnFinalize {
		r.SaveNow()
	}
}
