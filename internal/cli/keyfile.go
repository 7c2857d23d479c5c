package cli

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/words"
)

// maxKeyFile is the largest key file read: 64 hexadecimal characters and
// some whitespace fit many times over.
const maxKeyFile = 1 << 10

// keyFileFlag adds --key-file to fs and returns fs.
func keyFileFlag(fs *flag.FlagSet, path *string) *flag.FlagSet {
	fs.StringVar(path, "key-file", "", "read an encrypted save (world files, players' records, chunk records) with its key (Plugin.Key) in `FILE`: 32 raw bytes, or 64 hexadecimal characters")
	return fs
}

// readKeyFile reads the key of --key-file: nil for no path. The file holds
// exactly 32 bytes (the raw key) or 64 hexadecimal characters, surrounding
// whitespace allowed. A symlink, a directory or another kind of file is
// refused, as is a key of any other length (archetype.ErrWrongKey).
func readKeyFile(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	st, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("--key-file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("--key-file %s: %w: not a regular file (%s); give the key file itself, not a link to it", path, fs.ErrInvalid, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--key-file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("--key-file: %w", err)
	}
	if len(data) == 32 {
		return data, nil
	}
	text := bytes.TrimSpace(data)
	if len(text) == 64 {
		if key, err := hex.DecodeString(string(text)); err == nil {
			return key, nil
		}
	}
	return nil, fmt.Errorf("--key-file %s: %w: the file holds %d bytes; want the 32 bytes of the key, or the key as 64 hexadecimal characters",
		path, archetype.ErrWrongKey, min(len(data), maxKeyFile))
}

// readPECSWithKey reads the whole PECS file r and decrypts it with key:
// what export reads when --key-file is given.
func readPECSWithKey(r io.Reader, key []byte) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return pecs.Decrypt(data, key)
}

// encryptedNote reports whether err is that of an encrypted file inspected
// without the key (intact as stored: not a failure), and then tells, unless
// the output is JSON (whose "error" says it), how to read the file.
func encryptedNote(w io.Writer, path string, asJSON bool, err error) bool {
	if !errors.Is(err, archetype.ErrEncrypted) {
		return false
	}
	if asJSON {
		return true
	}
	fmt.Fprintf(w, "content     encrypted: its entities and resources need the save's key: arksave inspect --key-file FILE %s\n", path)
	return true
}

// headerFlags names a PECS header's flags for inspect.
func headerFlags(f uint32) string {
	var names []byte
	for _, fl := range []struct {
		bit  uint32
		name string
	}{{archetype.FlagLZ4, "lz4"}, {archetype.FlagSection, "section"}, {archetype.FlagCompactPool, "compact pool"}, {pecs.FlagEncrypted, "encrypted"}} {
		if f&fl.bit != 0 {
			if len(names) > 0 {
				names = append(names, ", "...)
			}
			names = append(names, fl.name...)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return string(names)
}

// encryptedCheckNote says what check could not verify without the key.
func encryptedCheckNote(w io.Writer, r *savetool.CheckReport) {
	if r.EncryptedRecords > 0 {
		fmt.Fprintf(w, "note: %s are intact as stored (their checksums match), but their content (pixels, bodies, regional entities) cannot be verified without the key: "+
			"that is not damage; give --key-file FILE to verify it\n", words.Count(r.EncryptedRecords, "encrypted chunk record", "encrypted chunk records"))
	}
	if r.WrongKeyRecords > 0 {
		fmt.Fprintf(w, "note: the key of --key-file does not open %s, whose checksums as stored match: "+
			"it is not the key this save was written with; their content was not verified\n", words.Count(r.WrongKeyRecords, "encrypted chunk record", "encrypted chunk records"))
	}
	if r.Encrypted > 0 {
		fmt.Fprintf(w, "note: %d encrypted files (world files, players' records) are intact as stored, but their content cannot be verified without the key: "+
			"that is not damage; give --key-file FILE to verify it\n", r.Encrypted)
	}
	if r.WrongKey > 0 {
		fmt.Fprintf(w, "note: the key of --key-file does not open %d encrypted files, whose checksums as stored match: "+
			"it is not the key this save was written with; their content was not verified\n", r.WrongKey)
	}
}

// readInfoKeyed describes the PECS file r (savetool.ReadPECSInfo):
// decrypted with key first when one is given.
func readInfoKeyed(r io.Reader, key []byte) (*pecs.Info, error) {
	if key == nil {
		return pecs.ReadInfo(r)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return &pecs.Info{}, err
	}
	return savetool.ReadPECSInfo(data, key)
}
