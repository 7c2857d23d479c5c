// Package errs holds the one corruption marker that every codec's
// ErrCorrupt is matched by, so that a caller needs a single check,
// errors.Is(err, arksave.ErrCorrupt), whatever layer found the damage (as
// pebble's base.ErrCorruption is re-exported at its root).
package errs

// Corrupt is the marker: the root package exports it as arksave.ErrCorrupt.
var Corrupt = New("arksave: corrupt data")

// sentinel is an error value that errors.Is matches by identity and, through
// its Is method, against the errors it refines (and what they match in
// turn): chunkstore.ErrChecksum refines chunkstore.ErrCorrupt, which refines
// Corrupt. Each package keeps its own distinct values, with its own message.
type sentinel struct {
	msg    string
	refine []error
}

// New returns a sentinel with message msg, a distinct value, that also
// matches each of refines. Its type stays unexported: callers see an error.
func New(msg string, refines ...error) error { return &sentinel{msg: msg, refine: refines} }

// Error returns the message.
func (s *sentinel) Error() string { return s.msg }

// Is reports whether target is one of the errors s refines, or matched by
// one of them.
func (s *sentinel) Is(target error) bool {
	for _, r := range s.refine {
		if r == target {
			return true
		}
		if x, ok := r.(interface{ Is(error) bool }); ok && x.Is(target) {
			return true
		}
	}
	return false
}
