package jetstream_test

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arksave/arksave/internal/contract"
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

	var mu sync.Mutex
	acked, failed := 0, 0 // the newest acknowledged generation, failed saves
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := saveGen(w, int(w.Generation())+1)
			mu.Lock()
			if r.Err == nil {
				if int(r.Generation) <= acked {
					t.Errorf("generation %d committed after %d", r.Generation, acked)
				}
				acked = int(r.Generation)
			} else {
				failed++
			}
			mu.Unlock()
		}
	}()
	newest := func() int {
		mu.Lock()
		defer mu.Unlock()
		return acked
	}
	// waitSaves waits until a save commits past generation g.
	waitSaves := func(g int, why string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for newest() <= g {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no save committed past generation %d in 30 s", why, g)
			}
			time.Sleep(2 * time.Millisecond) // polling a counter the saving goroutine advances
		}
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 16))
	t.Logf("seed %d", seed)
	waitSaves(0, "first save")
	var resume time.Duration
	for k := 0; k < kills; k++ {
		leader := c.waitHealthy("world")
		waitSaves(newest(), "before the shutdown")
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond) // a random moment of the next save
		c.servers[leader].Shutdown()
		c.servers[leader].WaitForShutdown()

		down := time.Now()
		waitSaves(newest(), "after the leader went down")
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
				want := newest()
				g := contract.ExpectReadable(t, reader, "world")
				expect(t, g >= want, "shutdown %d: server %d loads generation %d, %d was acknowledged", k, i, g, want)
			}()
		}
		c.restart(leader)
	}
	c.waitHealthy("world")
	waitSaves(newest(), "at the end")
	close(stop)
	<-done
	must(t, w.Close())
	final := newest()
	reader := connectFS(t, c.urls()[0], jetstream.Options{})
	g := contract.ExpectReadable(t, reader, "world")
	expect(t, g == final, "the world is at generation %d, the last acknowledged was %d", g, final)
	mu.Lock()
	t.Logf("%d leader shutdowns, %d generations committed, %d saves failed, saving resumed within %v", kills, final, failed, resume)
	mu.Unlock()
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
