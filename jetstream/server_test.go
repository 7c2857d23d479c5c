package jetstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/jetstream"
)

var expect, must = testkit.Expect, testkit.Must

// startServer runs a JetStream server on a loopback port, stopped when the
// test ends. Configure edits its options first.
func startServer(t testing.TB, configure ...func(*server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{
		ServerName: "arksave-test",
		Host:       "127.0.0.1",
		Port:       -1,
		JetStream:  true,
		StoreDir:   t.TempDir(),
		NoLog:      true,
		NoSigs:     true,
	}
	for _, c := range configure {
		c(o)
	}
	s, err := server.NewServer(o)
	must(t, err)
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// freePort returns a loopback port nobody listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// cluster is three JetStream servers in this process, routed on loopback.
type cluster struct {
	t       testing.TB
	opts    []*server.Options
	servers []*server.Server
}

func startCluster(t testing.TB, n int) *cluster {
	t.Helper()
	c := &cluster{t: t}
	ports := make([]int, n)
	for i := range ports {
		ports[i] = freePort(t)
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	for i := 0; i < n; i++ {
		o := &server.Options{
			ServerName: fmt.Sprintf("s%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "arksave", Host: "127.0.0.1", Port: ports[i]},
			Routes:     routes,
		}
		c.opts = append(c.opts, o)
	}
	c.servers = make([]*server.Server, n)
	for i := range c.opts {
		c.start(i)
	}
	for _, s := range c.servers {
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("cluster server did not start")
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok := true
		for _, s := range c.servers {
			if s.JetStreamIsClustered() && s.JetStreamIsCurrent() {
				continue
			}
			ok = false
		}
		if ok && c.metaLeader() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cluster elected no meta leader")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		for _, s := range c.servers {
			if s != nil {
				s.Shutdown()
			}
		}
	})
	c.waitPlacement()
	return c
}

// waitPlacement waits until the cluster places a stream on every server:
// until the meta leader has heard from each, it refuses ("no suitable
// peers for placement").
func (c *cluster) waitPlacement() { waitPlacement(c.t, c.urls(), len(c.servers)) }

// waitPlacement waits until the cluster of n servers at urls places a
// stream on every server.
func waitPlacement(t testing.TB, urls []string, n int) {
	t.Helper()
	nc, err := nats.Connect(strings.Join(urls, ","))
	must(t, err)
	defer nc.Close()
	js, err := natsjs.New(nc)
	must(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "PLACEMENT", Subjects: []string{"placement"}, Replicas: n, Storage: natsjs.MemoryStorage})
		if err == nil {
			err = js.DeleteStream(ctx, "PLACEMENT")
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster cannot place a stream on %d servers: %v", n, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the cluster's state
	}
}

func (c *cluster) start(i int) {
	o := *c.opts[i]
	s, err := server.NewServer(&o)
	must(c.t, err)
	go s.Start()
	c.servers[i] = s
}

func (c *cluster) metaLeader() *server.Server {
	for _, s := range c.servers {
		if s != nil && s.Running() && s.JetStreamIsLeader() {
			return s
		}
	}
	return nil
}

// urls lists the running servers' client URLs.
func (c *cluster) urls() []string {
	var out []string
	for _, s := range c.servers {
		if s != nil && s.Running() {
			out = append(out, s.ClientURL())
		}
	}
	return out
}

// connectFS connects to url and returns an FS that closes with the test.
func connectFS(t testing.TB, url string, o jetstream.Options) *jetstream.FS {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	must(t, err)
	f, err := jetstream.New(nc, o)
	must(t, err)
	t.Cleanup(func() {
		f.Close()
		nc.Close()
	})
	return f
}

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
