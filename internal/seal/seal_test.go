package seal

import (
	"errors"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/errs"
)

// A key of 32 bytes makes a cipher whose nonce and tag are the sizes the
// codecs lay out; any other length is errs.ErrWrongKey naming its owner
// and its length.
func TestNew(t *testing.T) {
	aead, err := New(make([]byte, KeySize), "test key")
	if err != nil || aead.NonceSize() != NonceSize || aead.Overhead() != TagSize {
		t.Fatalf("New(32 bytes): %v, %v", aead, err)
	}
	for _, n := range []int{0, 16, 31, 33, 64} {
		_, err := New(make([]byte, n), "test key")
		if !errors.Is(err, errs.ErrWrongKey) || !strings.Contains(err.Error(), "test key has") {
			t.Errorf("New(%d bytes): %v, want errs.ErrWrongKey naming the key", n, err)
		}
	}
}
