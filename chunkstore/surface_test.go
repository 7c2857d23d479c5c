package chunkstore_test

import (
	"testing"

	"github.com/arksave/arksave/internal/apicount"
)

// The package exports what a game or a file-system implementer needs and
// nothing only the module's own packages use (issue 24: at most 85
// declarations and methods, as scripts/apicount.sh counts them).
func TestPublicSurface(t *testing.T) {
	n, names, err := apicount.Count(".")
	if err != nil {
		t.Fatal(err)
	}
	if n > 85 {
		t.Errorf("chunkstore exports %d declarations and methods, at most 85: %v", n, names)
	}
}
