package archetype_test

import (
	"testing"

	"github.com/mlange-42/ark/ecs"
)

func TestRoundTripRichWorld(t *testing.T) {
	w := richWorld()
	data := encode(t, w)
	got := decode(t, data)
	expectSameWorld(t, w, got)
	expectBytes(t, data, encode(t, got), "re-encoded file")
}

func TestRoundTripEmptyWorld(t *testing.T) {
	w := ecs.NewWorld()
	registerAll(w)
	data := encode(t, w)
	got := decode(t, data)
	expectSameWorld(t, w, got)
	expectBytes(t, data, encode(t, got), "re-encoded file")
}
