package sim_test

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/vfs"
)

// A -load that is refused permission to read the save says it is a
// permission problem on which path, not damage: it names neither
// Plugin.LoadOrCreate nor arksave repair.
func TestLoadPermissionDenied(t *testing.T) {
	cfg := config(t, 5)
	_, err := sim.RunHeadless(sim.HeadlessOptions{Config: cfg, Ticks: 5, Out: &bytes.Buffer{}})
	expect(t, err == nil, "first run: %v", err)
	// The directory unreadable, found (as when its parent cannot be
	// searched) or not; its manifest unreadable.
	for _, c := range []struct {
		target string
		stat   bool
	}{{"", true}, {"", false}, {"manifest", false}} {
		denied := filepath.Join(cfg.Save.Dir, c.target)
		cfg := cfg
		cfg.Save.Load = true
		cfg.Save.FS = vfs.Faulty(vfs.OS, vfs.InjectorFunc(func(op vfs.Op, name string) error {
			if strings.HasPrefix(filepath.Clean(name), denied) && (c.stat || op != vfs.OpStat && op != vfs.OpLstat) {
				return &fs.PathError{Op: op.String(), Path: name, Err: fs.ErrPermission}
			}
			return nil
		}))

		s, err := sim.New(cfg)
		if err == nil {
			s.Close()
		}
		expect(t, err != nil, "%s unreadable: the load succeeded", denied)
		msg := err.Error()
		t.Logf("%s unreadable: %v", denied, err)
		expect(t, strings.Contains(msg, "permission problem on "+denied) && strings.Contains(msg, "not damage"),
			"%s unreadable: %v", denied, err)
		for _, wrong := range []string{"LoadOrCreate", "arksave repair", "holds no save"} {
			expect(t, !strings.Contains(msg, wrong), "%s unreadable: the error names %q: %v", denied, wrong, err)
		}
	}
}
