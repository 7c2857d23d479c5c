package jetstream_test

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/vfs"
)

func openWriter(t *testing.T, fsys vfs.FS, world string, wait time.Duration) *savedir.Writer {
	t.Helper()
	w, err := savedir.OpenWriter(world, savedir.Options{FS: fsys, Store: contract.StoreOptions(), LockTimeout: wait})
	must(t, err)
	return w
}

// holderBehindProxy starts a server and a writer that reaches it through a
// proxy, holds the world "world" with a lease of 1 s and has committed
// generations 1 and 2.
func holderBehindProxy(t *testing.T) (*server.Server, *proxy, *savedir.Writer) {
	t.Helper()
	s := startServer(t)
	p := startProxy(t, s.Addr().String())
	a := connectFS(t, p.URL(), jetstream.Options{LeaseTTL: time.Second, Timeout: 500 * time.Millisecond})
	wa := openWriter(t, a, "world", 0)
	t.Cleanup(func() { wa.Close() })
	for g := 1; g <= 2; g++ {
		must(t, saveGen(wa, g).Err)
	}
	return s, p, wa
}

func saveGen(w *savedir.Writer, g int) *autosave.Result {
	if !w.Submit(savedir.Job{Snap: contract.Snapshot(g), MaxBackups: 2}) {
		return &autosave.Result{Err: errors.New("writer busy")}
	}
	return w.Wait()
}

// Fencing: A holds the world and is cut off (as a paused or partitioned
// server is) until its lease expires; B waits for the world, takes it
// over and commits; A comes back and its save fails with ErrLocked naming
// B, and B's generations are intact.
func TestFencing(t *testing.T) {
	s, p, wa := holderBehindProxy(t)
	b := connectFS(t, s.ClientURL(), jetstream.Options{LeaseTTL: time.Second})
	_, err := savedir.OpenDir(b, "world")
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

// waitLeaseGone waits until the world's lease has expired on the server
// (its lock file is gone for a reader).
func waitLeaseGone(t *testing.T, reader vfs.FS, world string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := reader.Stat(world + "/lock")
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease of %s did not expire in 30 s: %v", world, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the server's state
	}
}

// A holder cut off until its lease expired, while nobody took the world,
// takes the lease back when it can reach the server again: saving resumes
// at the next generation (a save that was under way may fail; none says
// the lock is lost) and the world holds every acknowledged generation.
func TestLapsedLeaseTakenBack(t *testing.T) {
	s, p, wa := holderBehindProxy(t)
	reader := connectFS(t, s.ClientURL(), jetstream.Options{})
	p.pause()
	waitLeaseGone(t, reader, "world")
	p.resume()

	g := 3
	for attempt := 0; ; attempt++ {
		r := saveGen(wa, g)
		expect(t, !errors.Is(r.Err, autosave.ErrLocked), "save %d after the lease lapsed: %v", attempt, r.Err)
		if r.Err == nil {
			break
		}
		expect(t, attempt < 5, "saving did not resume after the lease lapsed: %v", r.Err)
	}
	must(t, saveGen(wa, g+1).Err)
	_, err := savedir.OpenDir(connectFS(t, s.ClientURL(), jetstream.Options{}), "world")
	expect(t, errors.Is(err, autosave.ErrLocked), "the lease was not taken back: another program opens the world: %v", err)
	must(t, wa.Close())
	contract.ExpectGeneration(t, reader, "world", g+1)
}

// A holder whose lease expired while it was cut off never takes it back
// once another program took the world over, even when that one has let go
// of it since (the lease is unheld again): the other one committed, and
// the first one's saves fail with ErrLocked for good.
func TestLapsedLeaseNotRetakenAfterTakeover(t *testing.T) {
	s, p, wa := holderBehindProxy(t)
	b := connectFS(t, s.ClientURL(), jetstream.Options{LeaseTTL: time.Second})
	p.pause()
	wb := openWriter(t, b, "world", 20*time.Second) // waits until A's lease has expired
	must(t, saveGen(wb, 3).Err)
	must(t, wb.Close()) // B lets go: the lease is unheld
	p.resume()

	for i := 0; i < 3; i++ {
		r := saveGen(wa, 3)
		var le *autosave.LockedError
		expect(t, errors.As(r.Err, &le) && le.Lost, "A's save %d after B took the world over and let go: %v", i, r.Err)
	}
	contract.ExpectGeneration(t, connectFS(t, s.ClientURL(), jetstream.Options{}), "world", 3)
}
