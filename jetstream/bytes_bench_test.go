package jetstream_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// published counts the payload bytes of every message published to a
// world's subjects, as a plain subscriber on another connection receives
// them: blocks stored again within a save count each time.
type published struct {
	nc  *nats.Conn
	sub *nats.Subscription
}

func countPublished(b *testing.B, url, world string) *published {
	b.Helper()
	nc, err := nats.Connect(url)
	must(b, err)
	b.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync("arksave." + world + ".>")
	must(b, err)
	must(b, sub.SetPendingLimits(-1, -1))
	must(b, nc.Flush())
	return &published{nc: nc, sub: sub}
}

// take returns the payload bytes received since the last take. Called
// after a save returned: every message of the save was delivered to the
// subscriber before its acknowledgement, so a round trip to the server
// brings in the last of them.
func (p *published) take(b *testing.B) int64 {
	b.Helper()
	must(b, p.nc.Flush())
	var n int64
	for {
		pending, _, err := p.sub.Pending()
		must(b, err)
		if pending == 0 {
			return n
		}
		m, err := p.sub.NextMsg(time.Second)
		must(b, err)
		n += int64(len(m.Data))
	}
}

// bytesWorld is one world of the bytes benchmark: its writer and its
// counters of the bytes a save writes.
type bytesWorld struct {
	label   string // backend and stored chunks, for the metrics
	backend string
	stored  int
	w       *savedir.Writer
	written atomic.Int64 // through vfs.Counting: what the save directory writes
	pub     *published   // JetStream only: the payloads published
	total   int64
}

func (bw *bytesWorld) open(b *testing.B, fsys vfs.FS, dir string) {
	b.Helper()
	counting := vfs.Counting(fsys, func(n int64, write bool) {
		if write {
			bw.written.Add(n)
		}
	})
	w, err := savedir.OpenWriter(dir, savedir.Options{FS: counting, Store: contract.WorldOptions()})
	must(b, err)
	b.Cleanup(func() { w.Close() })
	bw.w = w
	contract.SaveKeeping(b, w, contract.StoredWorld(bw.stored), contract.TwoBackups)
	bw.written.Store(0)
}

// save commits snap, keeping two backups, waits for what the writer does
// after it (compaction steps) and returns the bytes it cost.
func (bw *bytesWorld) save(b *testing.B, snap *snapshot.Snapshot) int64 {
	b.Helper()
	contract.SaveKeeping(b, bw.w, snap, contract.TwoBackups)
	if bw.pub != nil {
		bw.written.Store(0)
		return bw.pub.take(b)
	}
	return bw.written.Swap(0)
}

// BenchmarkBytesPerSave saves the same 5 changed chunks (64x64, each a
// tenth off the generator, contract.Changes) into worlds of 40, 1,600 and
// 10,000 stored chunks, in the directory on the local disk (bytes written,
// through vfs.Counting) and on a local JetStream server (the payload bytes
// of the messages published, blocks of 64 KiB), one save in every world
// per op, and reports each world's bytes per save and the ratios of the
// bigger worlds to the world of 40: a save costs what changed, not what
// the world holds. Every save keeps two backups (the game's defaults,
// every save of the last hour kept, write the same bytes: the contract's
// row PerSaveBytesFollowChanges measures both); compaction between saves counts with the save before it. Run it with -benchtime 240x or more, so
// that the compactions of the big worlds, every hundred saves or so, are
// in the figures as they are over time.
func BenchmarkBytesPerSave(b *testing.B) {
	s := startServer(b)
	fsys := connectFS(b, s.ClientURL(), jetstream.Options{})
	var worlds []*bytesWorld
	for _, backend := range []string{"dir", "nats"} {
		for _, n := range []int{40, 1600, 10_000} {
			bw := &bytesWorld{label: fmt.Sprintf("%s-%d", backend, n), backend: backend, stored: n}
			if backend == "dir" {
				bw.open(b, vfs.OS, filepath.Join(b.TempDir(), "save"))
			} else {
				world := fmt.Sprintf("bytes%d", n)
				bw.open(b, fsys, world)
				bw.pub = countPublished(b, s.ClientURL(), world)
			}
			worlds = append(worlds, bw)
		}
	}
	saves := 0
	for b.Loop() {
		saves++
		for _, bw := range worlds {
			bw.total += bw.save(b, contract.Changes(saves))
		}
	}
	base := map[string]float64{} // each backend's world of 40 (the first of its worlds)
	for _, bw := range worlds {
		perSave := float64(bw.total) / float64(saves)
		b.ReportMetric(perSave, "B/save@"+bw.label)
		if _, ok := base[bw.backend]; !ok {
			base[bw.backend] = perSave
			continue
		}
		b.ReportMetric(perSave/base[bw.backend], fmt.Sprintf("x%d/40@%s", bw.stored, bw.backend))
	}
}
