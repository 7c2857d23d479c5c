package archetype_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
)

// plainWriter is an io.Writer without a Grow method: Encode writes to it through a buffer.
type plainWriter struct{ b []byte }

func (w *plainWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// Every destination gets the same file: a plain writer, a bytes.Buffer (empty, holding bytes,
// partly read), a strings.Builder, and AppendEncode's slice (nil, with a prefix, with room). A
// world of megabytes takes the path that copies around the CPU's cache into memory.
func TestEncodeDestinationsAgree(t *testing.T) {
	for _, c := range []struct {
		name  string
		world *ecs.World
	}{{"small", richWorld()}, {"large", largeWorld(80_000)}} {
		t.Run(c.name, func(t *testing.T) { checkDestinations(t, c.world) })
	}
}

// largeWorld is richWorld with n more entities of Position and Velocity.
func largeWorld(n int) *ecs.World {
	w := richWorld()
	ecs.NewMap2[Position, Velocity](w).NewBatchFn(n, func(e ecs.Entity, p *Position, v *Velocity) {
		*p = Position{float64(e.ID()), -1}
		*v = Velocity{0.5, float64(e.ID() % 7)}
	})
	return w
}

func checkDestinations(t *testing.T, w *ecs.World) {
	ts := archetype.Timestamp(testTime)
	var plain plainWriter
	expectNoError(t, archetype.Encode(&plain, w, ts), "Encode into a plain writer")
	want := plain.b
	decode(t, want)

	var empty bytes.Buffer
	expectNoError(t, archetype.Encode(&empty, w, ts), "Encode into a bytes.Buffer")
	expectBytes(t, want, empty.Bytes(), "new bytes.Buffer")
	expectEqual(t, len(want), empty.Cap(), "capacity of a new bytes.Buffer: grown once, to the file's size")

	held := bytes.NewBufferString("abcdef")
	held.Next(2) // read "ab"
	expectNoError(t, archetype.Encode(held, w, ts), "Encode into a bytes.Buffer holding bytes")
	expectBytes(t, append([]byte("cdef"), want...), held.Bytes(), "bytes.Buffer holding unread bytes")

	drained := bytes.NewBufferString("xy")
	drained.Next(2) // read all: the buffer is empty but not reset
	expectNoError(t, archetype.Encode(drained, w, ts), "Encode into a drained bytes.Buffer")
	expectBytes(t, want, drained.Bytes(), "drained bytes.Buffer")

	var sb strings.Builder
	expectNoError(t, archetype.Encode(&sb, w, ts), "Encode into a strings.Builder")
	expectBytes(t, want, []byte(sb.String()), "strings.Builder")

	got, err := archetype.AppendEncode(nil, w, ts)
	expectNoError(t, err, "AppendEncode(nil)")
	expectBytes(t, want, got, "AppendEncode(nil)")
	expectEqual(t, len(want), cap(got), "capacity of AppendEncode(nil): the file's size")

	got, err = archetype.AppendEncode([]byte("head"), w, ts)
	expectNoError(t, err, "AppendEncode(prefix)")
	expectBytes(t, append([]byte("head"), want...), got, "AppendEncode(prefix)")

	roomy := make([]byte, 1, len(want)+1)
	got, err = archetype.AppendEncode(roomy, w, ts)
	expectNoError(t, err, "AppendEncode(roomy)")
	expectBytes(t, want, got[1:], "AppendEncode into spare capacity")
	expectEqual(t, &roomy[0], &got[0], "AppendEncode reuses spare capacity")
}

// A world that cannot be saved leaves AppendEncode's slice and the buffer as they were.
func TestEncodeErrorLeavesDestination(t *testing.T) {
	w := ecs.NewWorld()
	ecs.NewMap1[Enemy](w).NewEntity(&Enemy{})
	dst := []byte("keep")
	got, err := archetype.AppendEncode(dst, w)
	expectErrorIs(t, err, archetype.ErrUnsupportedType, "AppendEncode of a channel")
	expectBytes(t, []byte("keep"), got, "AppendEncode result after an error")
	buf := bytes.NewBufferString("keep")
	expectErrorIs(t, archetype.Encode(buf, w), archetype.ErrUnsupportedType, "Encode of a channel")
	expectBytes(t, []byte("keep"), buf.Bytes(), "bytes.Buffer after an error")
}
