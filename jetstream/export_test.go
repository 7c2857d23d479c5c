package jetstream

// What the tests that read a world's stream directly need of its layout.
const (
	HdrSize = hdrSize
	HdrOp   = hdrOp
)

// UnescapeName turns a name subject's last token back into the path it
// escapes.
func UnescapeName(tok string) (string, bool) { return unescapeName(tok) }
