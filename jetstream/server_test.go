package jetstream_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/arksave/arksave/jetstream"
)

func expect(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

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
