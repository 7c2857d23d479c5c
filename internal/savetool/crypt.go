package savetool

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
)

// plainPECS returns the plaintext of a PECS file (a world file or a
// player's record): data decrypted with key when it is encrypted, data as
// it is when it is not. An encrypted file is checked as stored first:
// damage is archetype.ErrCorrupt; then without a key it is
// archetype.ErrEncrypted, with a key that does not open it
// archetype.ErrWrongKey.
func plainPECS(data, key []byte) ([]byte, error) {
	return pecs.Decrypt(data, key)
}

// readInfo checks data, a whole PECS file, as pecs.ReadInfo does, after
// decrypting it with the report's key. An encrypted file read without the
// key is checked as stored (the header's and the footer's checksums) and
// counted in Encrypted, one the key does not open in WrongKey: not damage,
// but its content is not verified.
func (r *CheckReport) readInfo(data []byte) error {
	plain, err := plainPECS(data, r.cryptKey)
	if err == nil {
		_, err = pecs.ReadInfo(bytes.NewReader(plain))
	}
	switch {
	case errors.Is(err, archetype.ErrEncrypted):
		r.Encrypted++
		return nil
	case errors.Is(err, archetype.ErrWrongKey):
		r.WrongKey++
		return nil
	}
	return err
}

// checkStoredPECS checks data, a whole PECS file, as pecs.ReadInfo does,
// for repair, which takes no key: an encrypted file is checked as stored
// (its header's and footer's checksums), and intact as stored it is kept,
// never taken for damage.
func checkStoredPECS(data []byte) error {
	_, err := pecs.ReadInfo(bytes.NewReader(data))
	if errors.Is(err, archetype.ErrEncrypted) {
		return nil
	}
	return err
}

// ReadPECSInfo describes data, a whole PECS file, as pecs.ReadInfo does,
// decrypted with key first when one is given; the description keeps the
// header as stored (the encrypted flag, the stored size). Without a key an
// encrypted file is described by its header, with archetype.ErrEncrypted
// once its checksums as stored are found to match.
func ReadPECSInfo(data, key []byte) (*pecs.Info, error) {
	if key == nil {
		return pecs.ReadInfo(bytes.NewReader(data))
	}
	stored, _ := pecs.ReadHeader(data)
	plain, err := pecs.Decrypt(data, key)
	if err != nil {
		return &pecs.Info{Header: stored}, err
	}
	info, err := pecs.ReadInfo(bytes.NewReader(plain))
	if stored.Flags&pecs.FlagEncrypted != 0 {
		info.Header.Flags |= pecs.FlagEncrypted
		info.Header.FileSize = stored.FileSize
	}
	return info, err
}

// isKeyError reports whether err is that of encrypted content (a chunk
// record, a world file) read without the save's key or with another: not
// damage, and nothing a reader of the content can go past.
func isKeyError(err error) bool {
	return errors.Is(err, archetype.ErrEncrypted) || errors.Is(err, archetype.ErrWrongKey)
}

// keyFailure is the error of a tool that needs the content of encrypted
// chunk records and met err, a key error, reading one.
func keyFailure(err error) error {
	if errors.Is(err, archetype.ErrWrongKey) {
		return fmt.Errorf("savetool: the save's chunk records do not decrypt with the key of --key-file (intact as stored: not damage); give the key the game saved with: %w", err)
	}
	return fmt.Errorf("savetool: the save's chunk records are encrypted (Plugin.Key); give the save's key with --key-file FILE: %w", err)
}
