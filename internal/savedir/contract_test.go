package savedir_test

import (
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/vfs"
)

// The save directory's contract, on the file systems of this module: the
// jetstream module runs the same table against NATS JetStream.
func TestContract(t *testing.T) {
	t.Run("Mem", func(t *testing.T) {
		contract.Run(t, contract.Backend{New: func(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "/save" }})
	})
	t.Run("OS", func(t *testing.T) {
		contract.Run(t, contract.Backend{New: func(t *testing.T) (vfs.FS, string) {
			return vfs.OS, filepath.Join(t.TempDir(), "save")
		}})
	})
}
