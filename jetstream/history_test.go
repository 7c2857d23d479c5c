package jetstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/jetstream"
)

// block is one block message of a file as the stream keeps it.
type block struct {
	seq  uint64 // its stream sequence
	size int64  // the file's size after it (Arksave-Size)
}

// dataFile is a chunk store data file of a world, as the stream holds it.
type dataFile struct {
	name   string // its path in the save directory
	store  string // the chunk store it belongs to
	n      uint32 // its number in the store
	mirror bool   // the mirror of data file n in backups/, not the file
	ino    string
	blocks map[int64]block
}

// size is the file's size: what its newest block message says.
func (f *dataFile) size() int64 {
	var newest block
	for _, b := range f.blocks {
		if b.seq > newest.seq {
			newest = b
		}
	}
	return newest.size
}

// streamView reads a world's names and blocks straight from its stream,
// the way doc.go maps them, as another program with a plain NATS
// connection sees them.
type streamView struct {
	t      *testing.T
	st     natsjs.Stream
	prefix string // arksave.<world>
}

func newStreamView(t *testing.T, url, world string) *streamView {
	t.Helper()
	nc, err := nats.Connect(url)
	must(t, err)
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "ARKSAVE_"+world)
	must(t, err)
	return &streamView{t: t, st: st, prefix: "arksave." + world}
}

// subjects returns the stream's subjects under filter.
func (v *streamView) subjects(ctx context.Context, filter string) []string {
	info, err := v.st.Info(ctx, natsjs.WithSubjectFilter(filter))
	must(v.t, err)
	out := make([]string, 0, len(info.State.Subjects))
	for s := range info.State.Subjects {
		out = append(out, s)
	}
	return out
}

// dataFiles returns the world's chunk store data files, and their mirrors
// in backups/, with every block message each has.
func (v *streamView) dataFiles() map[string]*dataFile {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	byIno := map[string]*dataFile{}
	for _, subj := range v.subjects(ctx, v.prefix+".n.>") {
		name, ok := jetstream.UnescapeName(strings.TrimPrefix(subj, v.prefix+".n."))
		expect(v.t, ok, "name subject %s: bad escape", subj)
		file, mirror := strings.CutPrefix(name, savedir.MirrorName(""))
		store, n, ok := savedir.DataFileOf(file)
		if !ok {
			continue
		}
		m, err := v.st.GetLastMsgForSubject(ctx, subj)
		must(v.t, err)
		if m.Header.Get(jetstream.HdrOp) == "del" {
			continue
		}
		var e struct{ Ino string }
		must(v.t, json.Unmarshal(m.Data, &e))
		byIno[e.Ino] = &dataFile{name: name, store: path.Join(path.Dir(file), store), n: n, mirror: mirror, ino: e.Ino, blocks: map[int64]block{}}
	}
	for _, subj := range v.subjects(ctx, v.prefix+".d.>") {
		ino, k, ok := strings.Cut(strings.TrimPrefix(subj, v.prefix+".d."), ".")
		f := byIno[ino]
		if !ok || f == nil {
			continue // a file that is not a data file, or no longer named
		}
		m, err := v.st.GetLastMsgForSubject(ctx, subj)
		must(v.t, err)
		idx, err := strconv.ParseInt(k, 10, 64)
		must(v.t, err)
		size, err := strconv.ParseInt(m.Header.Get(jetstream.HdrSize), 10, 64)
		must(v.t, err)
		f.blocks[idx] = block{seq: m.Sequence, size: size}
	}
	out := map[string]*dataFile{}
	for _, f := range byIno {
		out[f.name] = f
	}
	return out
}

// sealed reports whether f is sealed among files: a later data file of
// its store exists (and so, once the writer's work after the save that
// started it is done, the whole of f's mirror).
func sealed(f *dataFile, files map[string]*dataFile) bool {
	for _, o := range files {
		if o.store == f.store && o.n > f.n {
			return true
		}
	}
	return false
}

// newest returns the newest data file of store among files, nil if none.
func newest(store string, files map[string]*dataFile) *dataFile {
	var out *dataFile
	for _, f := range files {
		if f.store == store && !f.mirror && (out == nil || f.n > out.n) {
			out = f
		}
	}
	return out
}

// checkPublished checks what one save published of the data files: no
// block of a data file sealed before it changed, and of the live store
// only blocks from the one that ended its newest data file on, and the
// blocks of data files it started. It returns how many sealed files it
// found unchanged.
func checkPublished(before, after map[string]*dataFile, save int) (unchanged int, err error) {
	for name, f := range after {
		old, ok := before[name]
		if !ok || old.ino != f.ino {
			continue // started by this save: all its blocks are new
		}
		if sealed(old, before) {
			for k, b := range old.blocks {
				if f.blocks[k] != b {
					return 0, fmt.Errorf("save %d: sealed data file %s: block %d was %+v, is %+v", save, name, k, b, f.blocks[k])
				}
			}
			if len(f.blocks) != len(old.blocks) {
				return 0, fmt.Errorf("save %d: sealed data file %s had %d blocks, has %d", save, name, len(old.blocks), len(f.blocks))
			}
			unchanged++
			continue
		}
		if path.Dir(name) != "." || newest(old.store, before) != old {
			continue
		}
		// The newest data file: its blocks before the one its end was in stay.
		from := old.size() / blockSize
		for k, b := range f.blocks {
			if ob, had := old.blocks[k]; (!had || ob != b) && k < from {
				return 0, fmt.Errorf("save %d: data file %s of %d bytes: block %d republished (only blocks from %d on may be)", save, name, old.size(), k, from)
			}
		}
	}
	return unchanged, nil
}

// blockSize is the world's block size in the test of sealed files.
const blockSize = 512

// TestSealedDataFilesNeverRepublished: across saves that start new data
// files (of 4 KiB, in blocks of 512 bytes) and compact between saves, the
// messages of a sealed data file's blocks, and of its mirror's in
// backups/, keep their stream sequences, and
// a save publishes of the data files only the newest one's last block and
// blocks after it, and the blocks of data files it starts.
func TestSealedDataFilesNeverRepublished(t *testing.T) {
	s := startServer(t)
	fsys := connectFS(t, s.ClientURL(), jetstream.Options{BlockSize: blockSize})
	o := contract.StoreOptions()
	o.DataFileSize = 4 << 10
	w, err := savedir.OpenWriter("sealed", savedir.Options{FS: fsys, Store: o})
	must(t, err)
	defer w.Close()
	const saves = 40
	must(t, saveGen(w, 1).Err)
	view := newStreamView(t, s.ClientURL(), "sealed")
	before := view.dataFiles()
	checked, compacted := 0, 0
	for g := 2; g <= saves; g++ {
		if !w.Submit(savedir.Job{Snap: contract.Snapshot(g), MaxBackups: saves}) {
			t.Fatal("writer busy")
		}
		r := w.WaitIdle()
		must(t, r.Err)
		if r.Compacted {
			compacted++
		}
		after := view.dataFiles()
		n, err := checkPublished(before, after, g)
		must(t, err)
		checked += n
		before = after
	}
	files, mirrors := 0, 0
	for _, f := range before {
		if !sealed(f, before) {
			continue
		}
		if f.mirror {
			mirrors++
		} else {
			files++
		}
	}
	t.Logf("%d saves, %d compactions, %d sealed data files and %d mirrors of them at the end, %d found unchanged after a save", saves, compacted, files, mirrors, checked)
	expect(t, files >= 5 && mirrors >= 5 && compacted > 0, "%d sealed data files, %d mirrors of them and %d compactions: the test tests too little", files, mirrors, compacted)
}
