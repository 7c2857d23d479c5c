package jetstream_test

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/contract"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/vfs"
)

func openWriter(t *testing.T, fsys vfs.FS, world string, wait time.Duration) *autosave.Writer {
	t.Helper()
	w, err := autosave.OpenWriter(world, autosave.Options{FS: fsys, Store: contract.StoreOptions(), LockTimeout: wait})
	must(t, err)
	return w
}

func saveGen(w *autosave.Writer, g int) *autosave.Result {
	if !w.Submit(autosave.Job{Snap: contract.Snapshot(g), MaxBackups: 2}) {
		return &autosave.Result{Err: errors.New("writer busy")}
	}
	return w.Wait()
}

// Fencing: A holds the world and is cut off (as a paused or partitioned
// server is) until its lease expires; B waits for the world, takes it
// over and commits; A comes back and its save fails with ErrLocked naming
// B, and B's generations are intact.
func TestFencing(t *testing.T) {
	s := startServer(t)
	p := startProxy(t, s.Addr().String())
	a := connectFS(t, p.URL(), jetstream.Options{LeaseTTL: time.Second, Timeout: 500 * time.Millisecond})
	b := connectFS(t, s.ClientURL(), jetstream.Options{LeaseTTL: time.Second})

	wa := openWriter(t, a, "world", 0)
	defer wa.Close()
	for g := 1; g <= 2; g++ {
		must(t, saveGen(wa, g).Err)
	}
	_, err := autosave.OpenDir(b, "world")
	expect(t, errors.Is(err, autosave.ErrLocked), "B opens the world while A holds it: %v", err)

	p.pause()
	wb := openWriter(t, b, "world", 20*time.Second) // waits until A's lease has expired
	expect(t, wb.Generation() == 2, "B took over at generation %d", wb.Generation())
	for g := 3; g <= 4; g++ {
		must(t, saveGen(wb, g).Err)
	}
	p.resume()

	for i := 0; i < 2; i++ { // and never again
		r := saveGen(wa, 3)
		var le *autosave.LockedError
		expect(t, errors.As(r.Err, &le) && le.Lost && errors.Is(r.Err, autosave.ErrLocked), "A's save after losing its lease: %v", r.Err)
		expect(t, le.Holder != nil && le.Holder.PID == os.Getpid(), "the error does not name B: %v", r.Err)
	}
	must(t, wb.Close())
	contract.ExpectGeneration(t, connectFS(t, s.ClientURL(), jetstream.Options{}), "world", 4)
}

// Steal takes a world at once from a holder that still renews its lease:
// the holder's next save fails with ErrLocked.
func TestSteal(t *testing.T) {
	s := startServer(t)
	a := connectFS(t, s.ClientURL(), jetstream.Options{})
	wa := openWriter(t, a, "world", 0)
	defer wa.Close()
	must(t, saveGen(wa, 1).Err)
	b := connectFS(t, s.ClientURL(), jetstream.Options{Steal: true})
	wb := openWriter(t, b, "world", 0)
	must(t, saveGen(wb, 2).Err)
	r := saveGen(wa, 2)
	expect(t, errors.Is(r.Err, autosave.ErrLocked), "the robbed holder's save: %v", r.Err)
	must(t, wb.Close())
	contract.ExpectGeneration(t, connectFS(t, s.ClientURL(), jetstream.Options{}), "world", 2)
}

// A change whose answer never came may still reach the server later, on a
// connection the client already gave up (its last packets on a slow
// path). Once the holder has gone on over a new connection, such a change
// must never be stored: here a rename's two messages (the new name, then
// the old one's deletion) arrive after the holder settled that the rename
// failed; storing the deletion alone would lose the file.
func TestLateChangeNeverStored(t *testing.T) {
	s := startServer(t)
	p := startProxy(t, s.Addr().String())
	reconnected := make(chan struct{}, 1)
	nc, err := nats.Connect(p.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	must(t, err)
	defer nc.Close()
	a, err := jetstream.New(nc, jetstream.Options{LeaseTTL: time.Minute, Timeout: 500 * time.Millisecond})
	must(t, err)
	defer a.Close()
	must(t, a.MkdirAll("w"))
	lock, err := a.Lock("w/lock")
	must(t, err)
	defer lock.Close()
	must(t, vfs.WriteFileAtomic(a, "w/a", []byte("hello")))

	p.hold()
	err = a.Rename("w/a", "w/b")
	expect(t, err != nil, "a rename whose answers are held back succeeded")
	p.cutClients()
	<-reconnected
	must(t, a.SyncDir("w")) // settles the failed rename over the new connection
	p.release()             // the rename's messages reach the server now

	names, err := connectFS(t, s.ClientURL(), jetstream.Options{}).ReadDir("w")
	must(t, err)
	expect(t, slices.Contains(names, "a") && !slices.Contains(names, "b"), "after the late rename: %v", names)
	must(t, vfs.WriteFileAtomic(a, "w/c", []byte("still the holder")))
	got, err := vfs.ReadFile(connectFS(t, s.ClientURL(), jetstream.Options{}), "w/a")
	must(t, err)
	expect(t, string(got) == "hello", "w/a holds %q", got)
}
