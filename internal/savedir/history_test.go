package savedir_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// GenerationAt picks the newest kept generation committed at or before a
// time: the exact time of each, a time between two, a time after all of
// them (the committed one); before all of them it names the oldest.
func TestGenerationAt(t *testing.T) {
	b := &backupSaver{t: t, fsys: vfs.NewMem(), every: 2, max: 10}
	b.open()
	for g := 1; g <= 4; g++ {
		b.save(g)
		now := b.w.Manifest().ModifiedMS
		for time.Now().UnixMilli() <= now {
			time.Sleep(time.Millisecond) // the next save commits at a later time
		}
	}
	must(t, b.w.Close())
	d, err := savedir.OpenDirReadOnly(b.fsys, "/save")
	must(t, err)
	at := map[uint64]time.Time{d.Generation(): time.UnixMilli(d.Manifest().ModifiedMS)}
	for _, m := range d.Backups() {
		at[m.Generation] = time.UnixMilli(m.ModifiedMS)
	}
	expect(t, len(at) == 4, "kept generations %v", at)
	for g := uint64(1); g <= 4; g++ {
		m, err := d.GenerationAt(at[g])
		must(t, err)
		expect(t, m.Generation == g, "at the time of generation %d: generation %d", g, m.Generation)
		if g < 4 {
			m, err = d.GenerationAt(at[g+1].Add(-time.Nanosecond))
			must(t, err)
			expect(t, m.Generation == g, "just before generation %d: generation %d", g+1, m.Generation)
		}
	}
	m, err := d.GenerationAt(time.Now().Add(time.Hour))
	must(t, err)
	expect(t, m.Generation == 4, "an hour ahead: generation %d, not the committed one", m.Generation)

	_, err = d.GenerationAt(at[1].Add(-time.Millisecond))
	expect(t, errors.Is(err, autosave.ErrNoGeneration) && strings.Contains(err.Error(),
		fmt.Sprintf("the oldest kept is generation 1 of %s", at[1].UTC().Format(time.RFC3339))), "before generation 1: %v", err)

	m, err = d.Pick(3, time.Time{})
	must(t, err)
	expect(t, m.Generation == 3, "Pick(3): %d", m.Generation)
	m, err = d.Pick(4, time.Time{})
	must(t, err)
	expect(t, m.Generation == 4, "Pick(4): %d", m.Generation)
	for _, bad := range []struct {
		gen  uint64
		at   time.Time
		want string
	}{{7, time.Time{}, "4 (committed), 3, 2, 1"}, {2, at[2], "both"}, {0, time.Time{}, "neither"}} {
		_, err := d.Pick(bad.gen, bad.at)
		expect(t, errors.Is(err, autosave.ErrNoGeneration) && strings.Contains(err.Error(), bad.want), "Pick(%d, %v): %v", bad.gen, bad.at, err)
	}
}
