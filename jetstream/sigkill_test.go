package jetstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/contract"
	"github.com/arksave/arksave/jetstream"
)

// A cluster whose servers are processes of their own (this test binary
// with nodeEnv set), so that the stream's leader can be killed with
// SIGKILL: it hands nothing over, as Shutdown does, and the others elect a
// new leader after Raft's election timeout (4 to 9 s), long enough for a
// lease of 5 s to lapse.

const nodeEnv = "ARKSAVE_JETSTREAM_NODE"

// nodeConf is what a node process is started with; a restart reuses it,
// store and ports.
type nodeConf struct {
	Name        string
	Port        int
	ClusterPort int
	Routes      []string
	StoreDir    string
}

func TestClusterNodeChild(t *testing.T) {
	conf := os.Getenv(nodeEnv)
	if conf == "" {
		t.Skip("helper process for TestClusterLeaderKilled")
	}
	var c nodeConf
	must(t, json.Unmarshal([]byte(conf), &c))
	o := &server.Options{
		ServerName: c.Name, Host: "127.0.0.1", Port: c.Port, JetStream: true, StoreDir: c.StoreDir,
		NoLog: true, NoSigs: true,
		Cluster: server.ClusterOpts{Name: "arksave", Host: "127.0.0.1", Port: c.ClusterPort},
	}
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		must(t, err)
		o.Routes = append(o.Routes, u)
	}
	s, err := server.NewServer(o)
	must(t, err)
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		t.Fatal("node did not start")
	}
	// Until killed, or until the test that started it ends (its stdin closes).
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
}

// procCluster is a cluster of node processes on loopback.
type procCluster struct {
	t     *testing.T
	confs []nodeConf
	cmds  []*exec.Cmd
	ins   []io.WriteCloser
}

func startProcCluster(t *testing.T, n int) *procCluster {
	t.Helper()
	c := &procCluster{t: t, cmds: make([]*exec.Cmd, n), ins: make([]io.WriteCloser, n)}
	var routes []string
	for i := 0; i < n; i++ {
		conf := nodeConf{Name: fmt.Sprintf("s%d", i+1), Port: freePort(t), ClusterPort: freePort(t), StoreDir: t.TempDir()}
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", conf.ClusterPort))
		c.confs = append(c.confs, conf)
	}
	for i := range c.confs {
		c.confs[i].Routes = routes
	}
	t.Cleanup(func() {
		for i := range c.cmds {
			c.kill(i)
		}
	})
	for i := range c.confs {
		c.start(i)
	}
	waitPlacement(t, c.urls(), n)
	return c
}

// start starts node i and waits until it takes clients.
func (c *procCluster) start(i int) {
	c.t.Helper()
	conf, err := json.Marshal(c.confs[i])
	must(c.t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestClusterNodeChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), nodeEnv+"="+string(conf))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	must(c.t, err)
	must(c.t, cmd.Start())
	c.cmds[i], c.ins[i] = cmd, in
	addr := fmt.Sprintf("127.0.0.1:%d", c.confs[i].Port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d did not start in 30 s: %v", i, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the node's port
	}
}

// kill ends node i's process with SIGKILL.
func (c *procCluster) kill(i int) {
	if c.cmds[i] == nil {
		return
	}
	_ = c.cmds[i].Process.Kill()
	_ = c.cmds[i].Wait()
	c.ins[i].Close()
	c.cmds[i] = nil
}

// urls lists every node's client URL.
func (c *procCluster) urls() []string {
	var out []string
	for _, conf := range c.confs {
		out = append(out, fmt.Sprintf("nats://127.0.0.1:%d", conf.Port))
	}
	return out
}

// waitHealthy waits until the stream has a leader and every other
// replica is current, and returns the leader's index.
func (c *procCluster) waitHealthy(js natsjs.JetStream, stream string) int {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		info, err := func() (*natsjs.StreamInfo, error) {
			st, err := js.Stream(ctx, stream)
			if err != nil {
				return nil, err
			}
			return st.Info(ctx)
		}()
		cancel()
		if err == nil && info.Cluster != nil && info.Cluster.Leader != "" && len(info.Cluster.Replicas) == len(c.confs)-1 {
			ok := true
			for _, r := range info.Cluster.Replicas {
				ok = ok && r.Current && !r.Offline && r.Lag == 0
			}
			for i, conf := range c.confs {
				if ok && conf.Name == info.Cluster.Leader {
					return i
				}
			}
		}
		if err != nil {
			last = err.Error()
		} else if info.Cluster != nil {
			b, _ := json.Marshal(info.Cluster)
			last = string(b)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the cluster did not recover in 60 s: %s", last)
		}
		time.Sleep(50 * time.Millisecond) // polling the cluster's state
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

	var mu sync.Mutex
	acked, failed := 0, 0 // the newest acknowledged generation, failed saves
	var lost error        // the first save that failed because the lock was lost
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
			switch {
			case r.Err == nil:
				if int(r.Generation) <= acked {
					t.Errorf("generation %d committed after %d", r.Generation, acked)
				}
				acked = int(r.Generation)
			case errors.Is(r.Err, autosave.ErrLocked):
				failed++
				if lost == nil {
					lost = r.Err
				}
			default:
				failed++
			}
			mu.Unlock()
		}
	}()
	var once sync.Once
	stopSaving := func() {
		once.Do(func() {
			close(stop)
			<-done
		})
	}
	defer stopSaving()
	newest := func() (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return acked, lost
	}
	// waitSaves waits until a save commits past generation g.
	waitSaves := func(g int, why string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			n, lost := newest()
			if lost != nil {
				t.Fatalf("%s: a save failed because the lock was lost: %v", why, lost)
			}
			if n > g {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no save committed past generation %d in 90 s", why, g)
			}
			time.Sleep(5 * time.Millisecond) // polling a counter the saving goroutine advances
		}
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	waitSaves(0, "first save")
	for k := 0; k < leaderKills; k++ {
		leader := c.waitHealthy(js, "ARKSAVE_"+world)
		n, _ := newest()
		waitSaves(n, fmt.Sprintf("kill %d: before the kill", k))
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond) // a random moment of the next save
		c.kill(leader)

		n, _ = newest()
		waitSaves(n, fmt.Sprintf("kill %d: after the leader was killed", k))
		// A remaining node loads the world at an acknowledged generation or
		// a newer one.
		reader, hangUp := dial(t, urls[(leader+1)%len(urls)], jetstream.Options{Timeout: 10 * time.Second})
		want, _ := newest()
		g := contract.ExpectReadable(t, reader, world)
		hangUp()
		expect(t, g >= want, "kill %d: generation %d loads, %d was acknowledged", k, g, want)
		c.start(leader)
	}
	c.waitHealthy(js, "ARKSAVE_"+world)
	n, _ := newest()
	waitSaves(n, "at the end")
	stopSaving()
	must(t, w.Close())
	final, _ := newest()
	reader, hangUp := dial(t, urls[0], jetstream.Options{Timeout: 10 * time.Second})
	defer hangUp()
	g := contract.ExpectReadable(t, reader, world)
	expect(t, g == final, "the world is at generation %d, the last acknowledged was %d", g, final)
	mu.Lock()
	t.Logf("%d leader kills, %d generations committed, %d saves failed", leaderKills, final, failed)
	mu.Unlock()
}
