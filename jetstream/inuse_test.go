package jetstream_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/vfs"
)

// A world in NATS JetStream that another program holds is "in use" as a
// world, not a save directory, and the message names the ways to get it:
// wait for it (-wait, Plugin.LockTimeout) or take it over (steal). A
// directory of the real file system keeps its own wording.
func TestInUseMessageNamesWaitAndSteal(t *testing.T) {
	s := startServer(t)
	a := connectFS(t, s.ClientURL(), jetstream.Options{LeaseTTL: 3 * time.Second})
	b := connectFS(t, s.ClientURL(), jetstream.Options{LeaseTTL: 3 * time.Second})
	wa := openWriter(t, a, "held", 0)
	defer wa.Close()

	_, err := savedir.OpenDir(b, "held")
	var le *autosave.LockedError
	if !errors.Is(err, autosave.ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("opening a held world: %v", err)
	}
	msg := err.Error()
	for _, part := range []string{"world held in NATS JetStream is in use by", "-wait", "Plugin.LockTimeout", "3s", "steal=true", "held?steal=true"} {
		if !strings.Contains(msg, part) {
			t.Errorf("the message lacks %q: %s", part, msg)
		}
	}
	if strings.Contains(msg, "save directory held") {
		t.Errorf("a JetStream world is called a save directory: %s", msg)
	}

	dir := t.TempDir()
	d, err := savedir.OpenDir(vfs.OS, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = savedir.OpenDir(vfs.OS, dir)
	if !errors.Is(err, autosave.ErrLocked) || !strings.Contains(err.Error(), "save directory "+dir+" is in use by") ||
		!strings.Contains(err.Error(), "close that first or use another directory") || strings.Contains(err.Error(), "steal") {
		t.Errorf("a held directory: %v", err)
	}
}
