package words_test

import (
	"testing"

	"github.com/arksave/arksave/internal/words"
)

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 problems", 1: "1 problem", 2: "2 problems"} {
		if got := words.Count(n, "problem", "problems"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
