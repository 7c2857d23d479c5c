package vfs_test

import (
	"testing"

	"github.com/arksave/arksave/internal/apicount"
)

// The package exports what a game or a file-system implementer needs and
// nothing only the module's own packages use (issue 24: at most 52
// declarations and methods, as scripts/apicount.sh counts them).
func TestPublicSurface(t *testing.T) { apicount.Within(t, ".", 52) }
