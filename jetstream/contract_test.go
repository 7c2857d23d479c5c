package jetstream_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/vfs"
)

// The save directory's contract, the same table as the directory's, on a
// world in JetStream: each test's save is a new world on one server, and
// "another program" is a second connection.
func TestContract(t *testing.T) {
	s := startServer(t)
	var n atomic.Int64
	contract.Run(t, contract.Backend{
		New: func(t *testing.T) (vfs.FS, string) {
			return connectFS(t, s.ClientURL(), jetstream.Options{BlockSize: 4096}), fmt.Sprintf("w%d", n.Add(1))
		},
		Other: func(t *testing.T, _ vfs.FS) vfs.FS {
			return connectFS(t, s.ClientURL(), jetstream.Options{})
		},
	})
}
