package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/arksave/arksave/internal/errs"
)

func TestSentinelsRefine(t *testing.T) {
	corrupt := errs.New("codec: corrupt data", errs.Corrupt)
	checksum := errs.New("codec: checksum mismatch", corrupt)
	other := errs.New("other: corrupt data", errs.Corrupt)
	err := fmt.Errorf("read chunk 3,4: %w", fmt.Errorf("%w: record at offset 128: crc 1 != 2", checksum))
	for _, c := range []struct {
		target error
		want   bool
	}{
		{checksum, true}, {corrupt, true}, {errs.Corrupt, true}, {other, false},
	} {
		if got := errors.Is(err, c.target); got != c.want {
			t.Errorf("errors.Is(%q, %q) = %v, want %v", err, c.target, got, c.want)
		}
	}
	if marked := fmt.Errorf("read header: %w", errs.Corrupt); errors.Is(marked, corrupt) {
		t.Error("the marker matches a codec's sentinel: refining goes one way")
	}
	if got := err.Error(); got != "read chunk 3,4: codec: checksum mismatch: record at offset 128: crc 1 != 2" {
		t.Errorf("message %q", got)
	}
}
