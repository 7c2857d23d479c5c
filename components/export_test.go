package components

// What the tests of this package look at besides the public API.

// ErrNotShared is what CopyTo returns after Release or a first CopyTo.
var ErrNotShared = errNotShared

// Shared reports whether a share's hold is in force.
func Shared(s SharedPixels) bool { return s.(*sharedPixels).shared() }
