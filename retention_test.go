package arksave_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// A retention with a negative duration is refused at Install, naming the
// field, before anything is written.
func TestInstallRefusesNegativeRetention(t *testing.T) {
	mem := vfs.NewMem()
	conf := autosave.DefaultConfig()
	conf.Retention.Thin[1].For = -time.Hour
	_, err := arksave.Plugin{Dir: "/save", FS: mem, Autosave: &conf}.Install(ecs.NewWorld())
	expect(t, errors.Is(err, autosave.ErrInvalidConfig) && strings.Contains(err.Error(), "Retention.Thin[1].For"),
		"install with a negative retention: %v", err)
	_, serr := mem.Stat("/save")
	expect(t, serr != nil, "a refused install created the save directory")
}

// The plugin's saves keep the generations Config.Retention keeps: with
// MaxBackups 0, which alone keeps none, every save of the last hour.
func TestPluginKeepsByRetention(t *testing.T) {
	mem := vfs.NewMem()
	conf := &autosave.Config{Interval: time.Hour, Retention: autosave.Retention{All: time.Hour}}
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Autosave: conf})
	for range 4 {
		must(t, g.WaitSave(t, g.Pers.Save()).Err)
	}
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	var gens []uint64
	for _, b := range d.Backups() {
		gens = append(gens, b.Generation)
	}
	expect(t, len(gens) == 3 && gens[0] == d.Generation()-1, "backups %v of generation %d, want the 3 before it", gens, d.Generation())
}

// A game may change its Config's Retention in place (a settings menu)
// while a save it asked for is being written: the writer works on a copy
// (go test -race finds a shared one).
func TestRetentionChangedDuringSave(t *testing.T) {
	conf := &autosave.Config{Interval: time.Hour, Retention: autosave.Retention{Thin: []autosave.Keep{{Every: time.Minute, For: time.Hour}}}}
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1, Autosave: conf})
	live := ecs.GetResource[autosave.Config](g.W)
	for i := range 3 {
		h := g.Pers.Save()
		g.Tick() // starts the save
		live.Retention.Thin[0].Every = time.Duration(i+2) * time.Minute
		must(t, g.WaitSave(t, h).Err)
	}
}
