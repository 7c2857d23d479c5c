// Package killtest is the protocol of the kill tests, shared by the save
// directory's (the root package) and JetStream's (the jetstream module): a
// child process runs save cycles and says what each save holds; the
// parent kills it with SIGKILL at a random instant, reads what it said,
// and judges what loads afterwards.
//
// The child prints "ready" once it plays, then for each generation G whose
// state has digest D "begin G D" before it saves and "done G D" once the
// save returned. After a kill, the save must load exactly the last
// generation that returned, or the one that was being saved at the kill.
package killtest

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Child runs save cycles until the process is killed: next prepares the
// next generation and returns it and its digest, save saves it and returns
// the generation committed. A failed save ends the process with status 1.
func Child(next func() (gen, digest uint64), save func() (uint64, error)) {
	fmt.Println("ready")
	for {
		gen, d := next()
		fmt.Printf("begin %d %x\n", gen, d)
		if got, err := save(); err != nil || got != gen {
			fmt.Printf("error generation %d: %v\n", got, err)
			os.Exit(1)
		}
		fmt.Printf("done %d %x\n", gen, d)
	}
}

// Said is what a killed child said.
type Said struct {
	Begun   map[uint64]uint64 // the digest of every generation whose save began
	MidSave bool              // the kill came while a save ran: the last line was a "begin"
	Done    *Acked            // the last save that returned, nil if none did
}

// Kill starts cmd (whose standard output must not be set), waits for its
// "ready", kills it with SIGKILL after delay and returns what it said.
func Kill(t testing.TB, cmd *exec.Cmd, delay time.Duration) Said {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l, ok := <-lines; !ok || l != "ready" {
		cmd.Wait()
		t.Fatalf("the child did not start: %q", l)
	}
	time.Sleep(delay) // the random instant of the kill
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s := Said{Begun: map[uint64]uint64{}}
	var last string
	for l := range lines {
		last = l
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "begin" && f[0] != "done" {
			cmd.Wait()
			t.Fatalf("the child said %q", l)
		}
		g, _ := strconv.ParseUint(f[1], 10, 64)
		d, _ := strconv.ParseUint(f[2], 16, 64)
		if f[0] == "begin" {
			s.Begun[g] = d
		} else {
			s.Done = &Acked{g, d}
		}
	}
	// Only now: Wait closes the pipe, and lines still unread would be lost.
	cmd.Wait()
	s.MidSave = strings.HasPrefix(last, "begin")
	return s
}

// Acked is the last generation whose save returned, across kills, and its
// digest; zero before the first.
type Acked struct{ Gen, Digest uint64 }

// Heard moves a on to the last save that returned in s.
func (a *Acked) Heard(s Said) {
	if s.Done != nil {
		*a = *s.Done
	}
}

// Judge checks what loaded after the kill that s describes (gen and its
// digest; 0 when nothing loads), a having heard s: the generation loaded
// must be the last that returned, or the one being saved at the kill,
// stored just before it (then a moves on to it).
func (a *Acked) Judge(s Said, gen, digest uint64) error {
	switch {
	case gen == 0 && a.Gen == 0: // killed before the first save returned
	case gen == a.Gen && digest == a.Digest:
	case s.Begun[gen] != 0 && gen == a.Gen+1 && digest == s.Begun[gen]:
		a.Gen, a.Digest = gen, digest // the save completed just before the kill
	default:
		return fmt.Errorf("loaded generation %d (digest %x); the last that returned is %d (%x), %d was begun (%x)",
			gen, digest, a.Gen, a.Digest, gen, s.Begun[gen])
	}
	return nil
}

// Keep copies the save directory dir (its regular files, in its
// subdirectories too) to a new directory under the system's temp dir and
// returns a sentence naming it, for the message of a failed check: the test's
// own directory is removed when the test ends, and a failure seen once in a
// hundred runs is worth its evidence.
func Keep(dir string) string {
	to, err := os.MkdirTemp("", "arksave-kill-")
	if err != nil {
		return "(the directory could not be kept: " + err.Error() + ")"
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(to, rel), data, 0o644)
		}
		return nil // a link or anything else is not followed
	})
	if err != nil {
		return "(the directory was kept in part at " + to + ": " + err.Error() + ")"
	}
	return "(the directory is kept at " + to + ")"
}
