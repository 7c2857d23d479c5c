package jetstream_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/jetstream"
)

// streamLeader returns the index of the server that leads the world's
// stream, -1 while none does.
func (c *cluster) streamLeader(world string) int {
	for i, s := range c.servers {
		if s != nil && s.Running() && s.JetStreamIsStreamLeader("$G", "ARKSAVE_"+world) {
			return i
		}
	}
	return -1
}

// waitHealthy waits until every server is up and caught up: the meta
// group and the world's stream have leaders and every replica of the
// stream is current. It returns the stream leader's index.
func (c *cluster) waitHealthy(world string) int {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader := c.streamLeader(world)
		ok := leader >= 0 && c.metaLeader() != nil
		for _, s := range c.servers {
			ok = ok && s.Running() && s.JetStreamIsCurrent() && s.JetStreamIsStreamCurrent("$G", "ARKSAVE_"+world)
		}
		if ok {
			return leader
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the cluster did not recover in 30 s (stream leader %d)", leader)
		}
		time.Sleep(10 * time.Millisecond) // polling the servers' state
	}
}

// restart starts server i again after a shutdown and waits until it takes
// clients (asking a server about JetStream before that races with its start).
func (c *cluster) restart(i int) {
	c.t.Helper()
	c.start(i)
	if !c.servers[i].ReadyForConnections(10 * time.Second) {
		c.t.Fatalf("server %d did not start again", i)
	}
}

// kills is how often the stream's leader is shut down in one run.
const kills = 20

// A three-node cluster with replication 3: a writer saves continuously
// while the stream leader's server is shut down at random moments of the
// saves, 20 times. No acknowledged generation is lost: each time, every
// remaining node loads a generation at least as new as the newest one
// acknowledged, world file, chunks and bodies exactly as saved; saving
// resumes under the new leader, and the last acknowledged generation is
// the world's at the end.
func TestClusterLeaderShutdown(t *testing.T) {
	c := startCluster(t, 3)
	nc, err := nats.Connect(strings.Join(c.urls(), ","), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	must(t, err)
	defer nc.Close()
	// A lease that outlives every outage of the test; a short timeout so
	// that a save whose answer went down with the leader fails soon.
	fsys, err := jetstream.New(nc, jetstream.Options{Replicas: 3, LeaseTTL: time.Minute, Timeout: time.Second})
	must(t, err)
	defer fsys.Close()
	w := openWriter(t, fsys, "world", 0)
	defer w.Close()

	sv := startSaving(t, w)
	defer sv.halt() // before the writer closes
	rng := seeded(t, 16)
	sv.waitPast(0, "first save")
	var resume time.Duration
	for k := 0; k < kills; k++ {
		leader := c.waitHealthy("world")
		sv.waitPast(sv.newest(), "before the shutdown")
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond) // a random moment of the next save
		c.servers[leader].Shutdown()
		c.servers[leader].WaitForShutdown()

		down := time.Now()
		sv.waitPast(sv.newest(), "after the leader went down")
		resume = max(resume, time.Since(down))
		// Every remaining node loads the world at an acknowledged generation
		// or a newer one.
		for i, s := range c.servers {
			if i == leader {
				continue
			}
			func() {
				reader, hangUp := dial(t, s.ClientURL(), jetstream.Options{Timeout: 10 * time.Second})
				defer hangUp()
				want := sv.newest()
				g := contract.ExpectReadable(t, reader, "world")
				expect(t, g >= want, "shutdown %d: server %d loads generation %d, %d was acknowledged", k, i, g, want)
			}()
		}
		c.restart(leader)
	}
	c.waitHealthy("world")
	sv.waitPast(sv.newest(), "at the end")
	sv.halt()
	must(t, w.Close())
	final, failed := sv.counts()
	reader := connectFS(t, c.urls()[0], jetstream.Options{})
	g := contract.ExpectReadable(t, reader, "world")
	expect(t, g == final, "the world is at generation %d, the last acknowledged was %d", g, final)
	t.Logf("%d leader shutdowns, %d generations committed, %d saves failed, saving resumed within %v", kills, final, failed, resume)
}

// seeded returns a random source seeded from the clock, and logs the seed.
func seeded(t *testing.T, stream uint64) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, stream))
}

// saver saves on its own goroutine, one generation after another, and
// keeps count of what the saves returned.
type saver struct {
	t    *testing.T
	w    *savedir.Writer
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu     sync.Mutex
	acked  int   // the newest acknowledged generation
	failed int   // saves that failed
	lost   error // the first save that failed because the lock was lost
}

// startSaving starts saving with w until halt or the test's end.
func startSaving(t *testing.T, w *savedir.Writer) *saver {
	s := &saver{t: t, w: w, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	t.Cleanup(s.halt)
	return s
}

func (s *saver) run() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		r := saveGen(s.w, int(s.w.Generation())+1)
		s.mu.Lock()
		switch {
		case r.Err == nil:
			if int(r.Generation) <= s.acked {
				s.t.Errorf("generation %d committed after %d", r.Generation, s.acked)
			}
			s.acked = int(r.Generation)
		case errors.Is(r.Err, autosave.ErrLocked) && s.lost == nil:
			s.lost = r.Err
			s.failed++
		default:
			s.failed++
		}
		s.mu.Unlock()
	}
}

// halt stops saving and waits for the save under way.
func (s *saver) halt() {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
	})
}

// newest returns the newest acknowledged generation.
func (s *saver) newest() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked
}

// counts returns the newest acknowledged generation and how many saves failed.
func (s *saver) counts() (acked, failed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked, s.failed
}

// waitPast waits until a save commits past generation g; it fails the
// test after 90 s, or as soon as a save failed because the lock was lost.
func (s *saver) waitPast(g int, why string) {
	s.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s.mu.Lock()
		acked, lost := s.acked, s.lost
		s.mu.Unlock()
		if lost != nil {
			s.t.Fatalf("%s: a save failed because the lock was lost: %v", why, lost)
		}
		if acked > g {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no save committed past generation %d in 90 s", why, g)
		}
		time.Sleep(5 * time.Millisecond) // polling a counter the saving goroutine advances
	}
}

// leaderKills is how often the stream's leader is killed in one run.
const leaderKills = 10

// The README's example location on a cluster of three processes,
// replication 3 and a lease of 5 s: a writer saves continuously while
// the stream leader's process is killed with SIGKILL at random moments of
// the saves, 10 times. The election outlasts the lease, which lapses
// while nobody holds it: the writer takes it back and saving resumes
// every time; no save fails because the lock was lost, and no
// acknowledged generation is lost: each time, a remaining node loads a
// generation at least as new as the newest one acknowledged, and the last
// acknowledged generation is the world's at the end.
func TestClusterLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a cluster node's process 10 times, each followed by an election of 4 to 9 s")
	}
	c := startProcCluster(t, 3)
	urls := c.urls()
	location := urls[0] + "/world?replicas=3&lease=5s&servers=" + strings.Join(urls[1:], ",")
	fsys, world, err := jetstream.Open(location)
	must(t, err)
	defer fsys.Close()
	w := openWriter(t, fsys, world, 0)
	defer w.Close()
	watch, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	must(t, err)
	defer watch.Close()
	js, err := natsjs.New(watch)
	must(t, err)

	sv := startSaving(t, w)
	defer sv.halt() // before the writer closes
	rng := seeded(t, 7)
	var resume time.Duration
	sv.waitPast(0, "first save")
	for k := 0; k < leaderKills; k++ {
		leader := c.waitHealthy(js, "ARKSAVE_"+world)
		sv.waitPast(sv.newest(), fmt.Sprintf("kill %d: before the kill", k))
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond) // a random moment of the next save
		c.kill(leader)

		killed := time.Now()
		sv.waitPast(sv.newest(), fmt.Sprintf("kill %d: after the leader was killed", k))
		resume = max(resume, time.Since(killed))
		// A remaining node loads the world at an acknowledged generation or
		// a newer one.
		reader, hangUp := dial(t, urls[(leader+1)%len(urls)], jetstream.Options{Timeout: 10 * time.Second})
		want := sv.newest()
		g := contract.ExpectReadable(t, reader, world)
		hangUp()
		expect(t, g >= want, "kill %d: generation %d loads, %d was acknowledged", k, g, want)
		c.start(leader)
	}
	c.waitHealthy(js, "ARKSAVE_"+world)
	sv.waitPast(sv.newest(), "at the end")
	sv.halt()
	must(t, w.Close())
	final, failed := sv.counts()
	reader, hangUp := dial(t, urls[0], jetstream.Options{Timeout: 10 * time.Second})
	defer hangUp()
	g := contract.ExpectReadable(t, reader, world)
	expect(t, g == final, "the world is at generation %d, the last acknowledged was %d", g, final)
	t.Logf("%d leader kills, %d generations committed, %d saves failed, saving resumed within %v", leaderKills, final, failed, resume)
}

// dial connects an FS to url; hangUp closes both.
func dial(t testing.TB, url string, o jetstream.Options) (f *jetstream.FS, hangUp func()) {
	t.Helper()
	nc, err := nats.Connect(url)
	must(t, err)
	f, err = jetstream.New(nc, o)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	return f, func() {
		f.Close()
		nc.Close()
	}
}
