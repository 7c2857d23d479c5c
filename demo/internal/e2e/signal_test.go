package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startDemo starts the demo with args and returns once it says it plays
// (its "demo: playing" line on standard error); its standard error goes to
// stderr. wait waits for the demo to exit, its standard error read.
func startDemo(t *testing.T, env []string, name string, args []string, stdout, stderr *bytes.Buffer) (cmd *exec.Cmd, wait func() error) {
	t.Helper()
	cmd = exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout = stdout
	pipe, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	ready := make(chan bool, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pipe)
		said := false
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if !said && strings.HasPrefix(sc.Text(), "demo: playing") {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
	}()
	var waited error
	var once sync.Once
	wait = func() error {
		once.Do(func() {
			<-read // Wait closes the pipe: read it to its end first
			waited = cmd.Wait()
		})
		return waited
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		wait()
	})
	select {
	case ok := <-ready:
		if !ok {
			wait()
			t.Fatalf("%s %v ended before it played:\n%s", name, args, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s %v did not start playing", name, args)
	}
	return cmd, wait
}

// holder returns the pid the save directory's lock file names.
func holder(t *testing.T, dir string) int {
	t.Helper()
	var h struct {
		PID int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "lock"))
	must(t, err)
	must(t, json.Unmarshal(b, &h))
	return h.PID
}

// Ctrl-C (SIGINT) or SIGTERM on the headless demo makes the same final
// save as reaching its last tick: with autosave off, that save alone keeps
// the new world.
func TestSignalMakesTheFinalSave(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "world")
			var stdout, stderr bytes.Buffer
			cmd, wait := startDemo(t, withoutDisplay(), demoHeadless(t), []string{"-ticks", "100000000", "-seed", "5", "-chunk", "128", "-autosave", "0", "-save", dir}, &stdout, &stderr)
			must(t, cmd.Process.Signal(sig))
			if err := wait(); err != nil {
				t.Fatalf("the demo exited with %v after %v:\n%s", err, sig, stderr.String())
			}
			var st struct {
				stats
				Stopped bool `json:"stopped"`
			}
			must(t, json.Unmarshal(stdout.Bytes(), &st))
			if !st.Stopped || st.Saves != 1 || st.FailedSaves != 0 || st.Generation != 1 || generation(dir) != 1 || st.Ticks >= 100000000 {
				t.Fatalf("after %v: %s\n%s", sig, stdout.String(), stderr.String())
			}
			runOK(t, "check", dir)
		})
	}
}

// SIGTERM on the demo in a window (under xvfb) makes the same final save as
// closing the window.
func TestSignalClosesTheWindow(t *testing.T) {
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Skip("xvfb-run is not on PATH (Debian package xvfb): skipping the window test")
	}
	dir := filepath.Join(t.TempDir(), "world")
	var stdout, stderr bytes.Buffer
	_, wait := startDemo(t, nil, xvfb, []string{"-a", "-s", "-screen 0 1280x800x24", demo(t), "-seed", "5", "-chunk", "128", "-autosave", "0", "-save", dir}, &stdout, &stderr)
	must(t, syscall.Kill(holder(t, dir), syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the windowed demo exited with %v after SIGTERM:\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the windowed demo did not exit after SIGTERM:\n%s", stderr.String())
	}
	if generation(dir) != 1 || !strings.Contains(stderr.String(), "final save: generation 1") {
		t.Fatalf("no final save after SIGTERM (generation %d):\n%s", generation(dir), stderr.String())
	}
	runOK(t, "check", dir)
}

// While the demo runs and autosaves every 50 ms of game time, a second demo
// and the arksave tool's changing commands refuse its directory, naming
// the demo's process; the tool's reading commands work, on a consistent
// generation, every time. After SIGTERM (the final save) the directory
// checks clean.
func TestToolsWhileTheDemoSaves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "world")
	var stdout, stderr bytes.Buffer
	cmd, wait := startDemo(t, withoutDisplay(), demoHeadless(t), []string{"-ticks", "100000000", "-seed", "6", "-chunk", "128", "-autosave", "50ms", "-backups", "2", "-save", dir}, &stdout, &stderr)
	pid := holder(t, dir)
	deadline := time.Now().Add(time.Minute)
	for generation(dir) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // another process saves: nothing to wait on but its files
	}
	if generation(dir) < 3 {
		t.Fatalf("the demo did not save:\n%s", stderr.String())
	}
	// A second demo on the same directory is refused, naming the first.
	second := exec.Command(demoHeadless(t), "-ticks", "60", "-load", "-chunk", "128", "-save", dir)
	second.Env = withoutDisplay()
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("in use by demo (pid %d", pid)) {
		t.Fatalf("a second demo on %s: %v\n%s", dir, err, out)
	}
	for _, c := range [][]string{{"compact"}, {"restore", "--generation", "1"}, {"repair"}, {"migrate"}} {
		out, code := run(t, append(c, dir)...)
		if code != 1 || !strings.Contains(out, fmt.Sprintf("in use by demo (pid %d", pid)) || !strings.Contains(out, "close the game first") {
			t.Fatalf("arksave %s while the demo saves: exit %d:\n%s", c[0], code, out)
		}
	}
	png := filepath.Join(t.TempDir(), "map.png")
	from := generation(dir)
	for generation(dir) < from+3 && time.Now().Before(deadline) {
		runOK(t, "check", dir)
		runOK(t, "inspect", dir)
		runOK(t, "export", "--json", dir)
		runOK(t, "render", "-o", png, dir)
	}
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	if err := wait(); err != nil {
		t.Fatalf("the demo exited with %v:\n%s", err, stderr.String())
	}
	runOK(t, "check", dir)
	if out := runOK(t, "compact", dir); !strings.Contains(out, "compacted") {
		t.Fatalf("compact after the demo closed:\n%s", out)
	}
}
