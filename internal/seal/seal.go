// Package seal makes the cipher both codecs encrypt with: AES-256-GCM of
// a game's 32-byte key (archetype's world files and entity sections,
// chunkstore's records).
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"

	"github.com/arksave/arksave/internal/errs"
)

// The sizes both codecs lay out around a ciphertext.
const (
	KeySize   = 32 // AES-256
	NonceSize = 12 // GCM's standard nonce
	TagSize   = 16 // GCM's tag
)

// New returns the AES-256-GCM of key. A key of another length is
// errs.ErrWrongKey, named by what (for example "chunkstore: Options.Key").
func New(key []byte, what string) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%s has %d bytes: %w; AES-256 needs exactly %d (the 32 random bytes the game keeps)",
			what, len(key), errs.ErrWrongKey, KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return cipher.NewGCM(block)
}
