package chunkstore

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/arksave/arksave/internal/crc8"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/seal"
)

// Encrypted records (Options.Key). A chunk or body record written with a
// key has record flag bit 4 (flagEncrypted) set, and what its other flags
// announce and its payload (as the codec left it) are stored as
//
//	nonce (12 bytes, random) || AES-256-GCM ciphertext || tag (16 bytes)
//
// so that size counts them 28 bytes more; raw, key, kind, codec and flags
// (header bytes 4..18) and the key bytes after the payload are the
// associated data: a record whose header is made to name another chunk
// does not decrypt. The CRC-8 and CRC32-C cover the record as stored, so
// damage is found (ErrCorrupt) before decryption and without the key. A
// record that is intact but does not decrypt is errs.ErrWrongKey; one
// read without a key is errs.ErrEncrypted. Page-table records are
// never encrypted (they hold offsets, positions and sizes, no world data).
const (
	cryptNonce    = seal.NonceSize
	cryptTag      = seal.TagSize
	cryptOverhead = cryptNonce + cryptTag
	cryptAADSize  = recordHCRCOff - 4
)

// recordCipher returns the AES-256-GCM of key, nil for no key; a key of
// another length than 32 bytes is refused.
func recordCipher(key []byte) (cipher.AEAD, error) {
	if key == nil {
		return nil, nil
	}
	return seal.New(key, "chunkstore: Options.Key")
}

// recordAAD is what an encrypted record's ciphertext is bound to: header
// bytes 4..18 of hdr and the key bytes kb.
func recordAAD(hdr, kb []byte) []byte {
	aad := make([]byte, 0, cryptAADSize+len(kb))
	aad = append(aad, hdr[4:recordHCRCOff]...)
	return append(aad, kb...)
}

// encryptRecord returns rec, a whole record whose header is filled in, as
// an encrypted record of its own under aead (a new slice).
func encryptRecord(aead cipher.AEAD, rec []byte) ([]byte, error) {
	size := int(binary.LittleEndian.Uint32(rec))
	body, kb := rec[recordHeaderSize:recordHeaderSize+size], rec[recordHeaderSize+size:]
	out := make([]byte, len(rec)+cryptOverhead)
	copy(out, rec[:recordHeaderSize])
	binary.LittleEndian.PutUint32(out, uint32(size+cryptOverhead))
	out[recordFlagsOff] |= flagEncrypted
	out[recordHCRCOff] = crc8.Checksum(out[:recordHCRCOff])
	nonce := out[recordHeaderSize : recordHeaderSize+cryptNonce]
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return nil, fmt.Errorf("chunkstore: encrypting a %s record: no random nonce: %w", recordKind(rec[16]), err)
	}
	at := recordHeaderSize + cryptNonce
	aead.Seal(out[at:at], nonce, body, recordAAD(out, kb))
	copy(out[at+size+cryptTag:], kb)
	binary.LittleEndian.PutUint32(out[recordCRCOff:], recordCRC(out))
	return out, nil
}

// decryptRecord returns the plaintext record of rec, an encrypted record
// read at off whose header h and checksum are checked, in dst (grown as
// needed), and its header: the record as it was before encryptRecord,
// except for its checksums, which are not checked again. aead nil (no
// key) is errs.ErrEncrypted; a key that does not open it is
// errs.ErrWrongKey.
func decryptRecord(aead cipher.AEAD, h recordHeader, rec []byte, off int64, dst []byte) (recordHeader, []byte, error) {
	if aead == nil {
		return h, nil, fmt.Errorf("%w: %s at %v is intact (its checksum matches) but encrypted: open the store with the key the game saved it with "+
			"(chunkstore Options.Key, arksave's Plugin.Key, the arksave command's --key-file)", errs.ErrEncrypted, h.kind, loc(off))
	}
	body, kb := rec[recordHeaderSize:recordHeaderSize+h.size], rec[recordHeaderSize+h.size:h.length()]
	plain := int(h.size) - cryptOverhead
	n := recordHeaderSize + plain + len(kb)
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	copy(dst, rec[:recordHeaderSize])
	if _, err := aead.Open(dst[recordHeaderSize:recordHeaderSize], body[:cryptNonce], body[cryptNonce:], recordAAD(rec, kb)); err != nil {
		return h, nil, fmt.Errorf("%w: %s at %v is intact (its checksum matches) but does not decrypt with this key: give the key the game saved it with",
			errs.ErrWrongKey, h.kind, loc(off))
	}
	copy(dst[recordHeaderSize+plain:], kb)
	binary.LittleEndian.PutUint32(dst, uint32(plain))
	dst[recordFlagsOff] &^= flagEncrypted
	h.size = uint32(plain)
	h.flags &^= flagEncrypted
	return h, dst, nil
}

// decrypt returns the plaintext of the checked record rec read at off, in
// sc.plain, when it is encrypted, and rec as it is otherwise.
func (s *Store) decrypt(h recordHeader, rec []byte, off int64, sc *readScratch) (recordHeader, []byte, error) {
	if h.flags&flagEncrypted == 0 {
		return h, rec, nil
	}
	h, p, err := decryptRecord(s.aead, h, rec, off, sc.plain)
	if p != nil {
		sc.plain = p[:0:cap(p)]
	}
	return h, p, err
}

// encrypt encrypts it.rec when the store has a key.
func (s *Store) encrypt(it *workItem) {
	if s.aead == nil || it.rec == nil || it.err != nil {
		return
	}
	it.rec, it.err = encryptRecord(s.aead, it.rec)
}

// encrypted reads the header of the record at h and reports whether it is
// encrypted.
func (s *Store) encrypted(h handle) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false, ErrClosed
	}
	f, err := s.files.get(h.File())
	if err != nil {
		return false, err
	}
	var hb [recordHeaderSize]byte
	if err := readFull(f, hb[:], h.Offset); err != nil {
		return false, err
	}
	rh, err := parseRecordHeader(hb[:], h.Offset)
	return rh.flags&flagEncrypted != 0, err
}

// cryptFlags are the header flags of a store written with key: none
// without one, flagEncryptedRecs with one, so that a reader that does not
// know encrypted records refuses the store (ErrVersion) instead of taking
// them for damage.
func cryptFlags(key []byte) uint16 {
	if key == nil {
		return 0
	}
	return flagEncryptedRecs
}
