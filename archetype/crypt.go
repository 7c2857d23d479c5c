package archetype

import (
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/seal"
)

// An encrypted PECS file (flagEncrypted, a world file or an entity section written with [Key]):
//
//	header (64 bytes, plaintext, flagEncrypted set, file size of the encrypted file)
//	nonce (12 bytes, random)
//	AES-256-GCM ciphertext of every byte the plaintext file holds between its header and its
//	  footer, with its 16-byte tag; the 64 header bytes are the associated data
//	footer (32 bytes): CRC32C of everything before it, as stored
//
// The plaintext file is the file [Encode] writes without the key; its header differs from the
// stored one only in the flag and the file size, so the reader rebuilds it and reads it as usual.

const (
	flagEncrypted = pecs.FlagEncrypted
	nonceSize     = seal.NonceSize
	tagSize       = seal.TagSize
	sealedExtra   = nonceSize + tagSize
)

// ErrEncrypted is returned when a file is encrypted (written with [Key]) and no key was given to
// read it. The file may be intact: give the key with [Key] (the arksave command: --key-file).
var ErrEncrypted = errs.ErrEncrypted

// ErrWrongKey is returned when an encrypted file whose checksum matches (it is intact as
// stored) does not decrypt with the given key, and when a key is not 32 bytes long. It is not
// [ErrCorrupt]: the file is fine, the key is not the one it was written with.
var ErrWrongKey = errs.ErrWrongKey

// Key encrypts what [Encode], [AppendEncode] and [AppendEntities] write with AES-256-GCM under
// key (32 bytes), and lets [Decode], [DecodeEntities] and the readers open files written so.
// The 64-byte header stays readable (its counts, version and timestamp are not secret) and is
// authenticated; everything else is ciphertext behind a random nonce, so the same world gives
// different bytes on every call. Without Key an encrypted file is [ErrEncrypted]; with a key
// other than the writer's it is [ErrWrongKey]. A file written without encryption reads with
// or without Key. A key that is not 32 bytes makes every call fail with [ErrWrongKey], naming
// its length. Encode and Decode.
func Key(key []byte) Option {
	k := append([]byte(nil), key...)
	return func(o *options) { o.key = k; o.keyed = true }
}

// newAEAD returns the AES-256-GCM of key.
func newAEAD(key []byte) (cipher.AEAD, error) { return seal.New(key, "archetype: the key") }

// checkKey refuses a key option whose key cannot be an AES-256 key, before anything is done.
func (o *options) checkKey() error {
	if !o.keyed {
		return nil
	}
	_, err := newAEAD(o.key)
	return err
}

// sealFile encrypts the plaintext PECS file plain (a whole file, header and footer included,
// as Encode writes it) and appends the encrypted file to dst.
func sealFile(dst, plain, key []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return dst, err
	}
	h, err := parseHeader(plain[:headerSize])
	if err != nil {
		return dst, err
	}
	if uint64(len(plain)) > math.MaxInt-sealedExtra {
		return dst, fmt.Errorf("archetype: file of %d bytes is too large to encrypt", len(plain))
	}
	h.Flags |= flagEncrypted
	h.FileSize = uint64(len(plain)) + sealedExtra
	start := len(dst)
	out := make([]byte, 0, len(dst)+int(h.FileSize))
	out = append(out, dst...)
	out = appendHeader(out, &h)
	nonce := out[len(out) : len(out)+nonceSize]
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return dst, fmt.Errorf("archetype: encrypting: no random nonce: %w", err)
	}
	out = out[:len(out)+nonceSize]
	out = aead.Seal(out, nonce, plain[headerSize:len(plain)-footerSize], out[start:start+headerSize])
	crc := crc32.Checksum(out[start:], castagnoli)
	return appendFooter(out, &footer{checksumType: ChecksumCRC32C, checksum: uint64(crc), fileSize: h.FileSize}), nil
}

// openStored checks the rest of an encrypted file, whose header h (already read and checked)
// came from f.s, against its footer's checksum, decrypts it with key and returns the plaintext
// file: the header without the flag, the decrypted bytes, a footer over them. Damage to the
// stored bytes is [ErrCorrupt] (the checksum, first); a key that does not open an intact file
// is [ErrWrongKey]; no key at all is [ErrEncrypted], after the checksum was checked.
func (f *fileReader) openStored(h *fileHeader) ([]byte, error) {
	if h.FileSize < headerSize+sealedExtra+footerSize {
		return nil, fmt.Errorf("%w: header at offset 40: file size %d is too small for an encrypted file", ErrCorrupt, h.FileSize)
	}
	var head [headerSize]byte
	appendHeader(head[:0], h)
	h.Flags &^= flagEncrypted // remaining() and the footer only need the size
	stored, err := f.s.next(nil, f.s.remaining(), "encrypted data")
	if err != nil {
		return nil, err
	}
	if err := f.readFooter(); err != nil {
		return nil, err
	}
	if f.key == nil {
		return nil, fmt.Errorf("%w: the file of %d bytes is intact, but its entities and resources are encrypted (flag %#x); "+
			"read it with the key it was written with (archetype.Key, or the arksave command's --key-file)", ErrEncrypted, h.FileSize, flagEncrypted)
	}
	aead, err := newAEAD(f.key)
	if err != nil {
		return nil, err
	}
	plainSize := h.FileSize - sealedExtra
	plain := make([]byte, 0, plainSize)
	ph := *h
	ph.FileSize = plainSize
	plain = appendHeader(plain, &ph)
	plain, err = aead.Open(plain, stored[:nonceSize], stored[nonceSize:], head[:])
	if err != nil {
		return nil, fmt.Errorf("%w: the file is intact (its checksum matches) but does not decrypt with this key: "+
			"give the key the game saved it with", ErrWrongKey)
	}
	crc := crc32.Checksum(plain, castagnoli)
	return appendFooter(plain, &footer{checksumType: ChecksumCRC32C, checksum: uint64(crc), fileSize: plainSize}), nil
}

// openFile returns the plaintext file of data, an encrypted PECS file, opened with key (the
// arksave command's readers, through pecs.Decrypt). A file that is not encrypted is returned
// as it is.
func openFile(data, key []byte) ([]byte, error) {
	h, err := readHeader(data)
	if err != nil || h.Flags&flagEncrypted == 0 {
		return data, err
	}
	f := newFileReader(sectionBuffer(data), key)
	var b [headerSize]byte
	if err := f.s.full(b[:], "header"); err != nil {
		return nil, err
	}
	f.header, f.s.fileSize = h, int64(h.FileSize)
	return f.openStored(&h)
}
