package errs

import "errors"

// ErrEncrypted and ErrWrongKey are the sentinels of encrypted content (a PECS
// file, a chunk record): archetype exports them as archetype.ErrEncrypted
// and archetype.ErrWrongKey, and the chunk store's errors wrap the same
// values, so that one errors.Is matches both whatever layer read the bytes.
var (
	ErrEncrypted = errors.New("archetype: the file is encrypted: give the key")
	ErrWrongKey  = errors.New("archetype: wrong key")
)
