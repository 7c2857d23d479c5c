package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	_ "github.com/arksave/arksave/jetstream" // nats:// locations
)

// startNATS runs a JetStream server in the test's process, on a loopback
// port, until the test ends: what `nats-server -js -sd <dir>` runs.
func startNATS(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		ServerName: "arksave-demo-test", Host: "127.0.0.1", Port: -1,
		JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	must(t, err)
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// waitGeneration waits until the save at location is past generation g.
func waitGeneration(t *testing.T, location string, g int) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if cur := generation(location); cur > g {
			return cur
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed at generation %d for a minute", location, g)
		}
		time.Sleep(20 * time.Millisecond) // polling the server, as a person watching would
	}
}

// The README's two demos on one world in NATS JetStream: the first plays
// and autosaves; a second one started with -load -wait waits while the
// first holds the world, and once the first is killed (SIGKILL: it never
// lets go, its lease expires) takes the world over from its last
// acknowledged save, plays on and saves.
func TestSecondDemoTakesOver(t *testing.T) {
	s := startNATS(t)
	location := s.ClientURL() + "/sand?lease=2s"
	var out1, err1 bytes.Buffer
	first, wait1 := startDemo(t, withoutDisplay(), demoHeadless(t),
		[]string{"-ticks", "100000000", "-seed", "3", "-chunk", "128", "-autosave", "100ms", "-save", location}, &out1, &err1)
	gen := waitGeneration(t, location, 0)

	second := exec.Command(demoHeadless(t), "-ticks", "60", "-chunk", "128", "-autosave", "0", "-load", "-wait", "1m", "-save", location)
	second.Env = withoutDisplay()
	var out2 bytes.Buffer
	second.Stdout = &out2
	pipe, err := second.StderrPipe()
	must(t, err)
	must(t, second.Start())
	t.Cleanup(func() { second.Process.Kill() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var err2 strings.Builder
	next := func() (string, bool) {
		select {
		case l, ok := <-lines:
			err2.WriteString(l + "\n")
			return l, ok
		case <-time.After(time.Minute):
			t.Fatalf("the second demo said nothing for a minute:\n%s", err2.String())
			return "", false
		}
	}
	if l, _ := next(); !strings.HasPrefix(l, "demo: opening") {
		t.Fatalf("the second demo does not say that it waits: %q", l)
	}
	// While the first demo plays and saves on, the second one waits.
	gen = waitGeneration(t, location, gen)
	waitGeneration(t, location, gen)
	select {
	case l := <-lines:
		t.Fatalf("the second demo did not wait for the first: %q", l)
	default:
	}

	must(t, first.Process.Kill())
	killed := time.Now()
	if err := wait1(); err == nil {
		t.Fatalf("the first demo was not killed:\n%s", err1.String())
	}
	if ws, ok := first.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the first demo was not killed: %v", first.ProcessState)
	}
	last := generation(location)
	l, _ := next()
	if !strings.HasPrefix(l, "demo: playing") || !strings.Contains(l, fmt.Sprintf("(generation %d)", last)) {
		t.Fatalf("the second demo did not take the world over: %q\n%s", l, err2.String())
	}
	t.Logf("the second demo took over %v after the kill: %s", time.Since(killed).Round(time.Millisecond), l)
	for _, ok := next(); ok; _, ok = next() {
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("the second demo: %v\n%s", err, err2.String())
	}
	var st stats
	must(t, json.Unmarshal(out2.Bytes(), &st))
	if !st.Loaded || st.StartTick == 0 || st.Problems != 0 || st.FailedSaves != 0 || st.Generation != last+1 || generation(location) != last+1 {
		t.Fatalf("the second demo after the first one's generation %d: %s", last, out2.String())
	}
}
