package archetype

import (
	"testing"
)

// PublicCreation makes Decode create entities with Ark's public calls, as it does where batch
// creation is not safe, until the test ends. Tests of the black-box package use it to run
// both ways.
func PublicCreation(t testing.TB) {
	t.Helper()
	old := batchCreation
	batchCreation = func() bool { return false }
	t.Cleanup(func() { batchCreation = old })
}

// This module is built with the Ark version arkbatch.go mirrors, so the probe must pass and
// Decode must size tables once; if Ark is upgraded, this test says so before the figures do.
func TestBatchCreationIsUsed(t *testing.T) {
	if !arkLinked {
		t.Skip("built with arksave_nolinkname: Decode uses Ark's public calls only")
	}
	if got := arkVersion(); got != arkBatchVersion {
		t.Fatalf("Ark version %q, arkbatch.go mirrors %s: check World.newEntities and relationID, then update arkBatchVersion", got, arkBatchVersion)
	}
	if !probeBatch() {
		t.Fatal("the probe of Ark's batch creation failed")
	}
	if !batchCreation() {
		t.Fatal("batch creation is off")
	}
}

// rawBytes hands out memory of the size asked; growRaw keeps what the slice holds.
func TestRawBytes(t *testing.T) {
	if b := rawBytes(0); b != nil {
		t.Errorf("rawBytes(0) = %v, want nil", b)
	}
	b := rawBytes(100)
	if len(b) != 0 || cap(b) != 100 {
		t.Errorf("rawBytes(100): len %d cap %d, want 0 and 100", len(b), cap(b))
	}
	src := []byte("prefix")
	g := growRaw(src, 1000)
	if string(g) != "prefix" || cap(g)-len(g) < 1000 {
		t.Errorf("growRaw: %q with room for %d", g, cap(g)-len(g))
	}
	roomy := make([]byte, 3, 64)
	if g := growRaw(roomy, 50); &g[:1][0] != &roomy[:1][0] {
		t.Error("growRaw reallocated a slice that had room")
	}
}
