package jetstream_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// BenchmarkMapping times the writes of one generation, the same bytes, in
// three ways of laying a world out in JetStream, against one local server
// (replication 1) and, interleaved call by call, reports each way's time
// per commit:
//
//   - stream: what package jetstream does. One stream per world; a file is
//     blocks, each the last message of its own subject, a name the last
//     message of another; every message expects the stream's last sequence,
//     so all of a commit goes out as one pipeline with one wait, and the
//     single sequence fences every write of a holder that lost its lease.
//   - kv+object: the records appended to a stream of their own (a record's
//     offset becomes its sequence), the world file an object in an object
//     store, the commit point a key-value entry updated by compare-and-set
//     on its revision. Three services, three waits; the compare-and-set
//     fences the commit point only.
//   - kv: every block and the commit point a key in one key-value bucket,
//     put one after the other (the key-value API answers each put).
//
// A commit here is what a save of 5 dirty chunks writes: 5 records of 12
// KiB, a world file of 48 KiB, and a commit point of 400 bytes.
func BenchmarkMapping(b *testing.B) {
	s := startServer(b)
	nc, err := nats.Connect(s.ClientURL())
	must(b, err)
	defer nc.Close()
	j, err := js.New(nc, js.WithPublishAsyncMaxPending(4096))
	must(b, err)
	ctx := context.Background()
	record := bytes.Repeat([]byte("r"), 12<<10)
	world := bytes.Repeat([]byte("w"), 48<<10)
	manifest := bytes.Repeat([]byte("m"), 400)

	st, err := j.CreateStream(ctx, js.StreamConfig{Name: "MAP", Subjects: []string{"map.>"}, MaxMsgsPerSubject: 1})
	must(b, err)
	last := uint64(0)
	stream := func(g int) {
		var futs []js.PubAckFuture
		pub := func(subject string, data []byte) {
			f, err := j.PublishAsync(subject, data, js.WithExpectLastSequence(last))
			must(b, err)
			last++
			futs = append(futs, f)
		}
		for i := range 5 {
			pub(fmt.Sprintf("map.d.chunks.%d", g*5+i), record)
		}
		pub(fmt.Sprintf("map.d.world%d.0", g), world)
		pub("map.n.world", []byte(fmt.Sprintf(`{"ino":"world%d"}`, g)))
		pub("map.d.manifest.0", manifest)
		for _, f := range futs {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				b.Fatal(err)
			}
		}
	}
	_ = st

	records, err := j.CreateStream(ctx, js.StreamConfig{Name: "RECORDS", Subjects: []string{"records"}})
	must(b, err)
	_ = records
	obj, err := j.CreateObjectStore(ctx, js.ObjectStoreConfig{Bucket: "worlds"})
	must(b, err)
	commitKV, err := j.CreateKeyValue(ctx, js.KeyValueConfig{Bucket: "commit"})
	must(b, err)
	rev, err := commitKV.Create(ctx, "manifest", manifest)
	must(b, err)
	kvObject := func(g int) {
		var futs []js.PubAckFuture
		for range 5 {
			f, err := j.PublishAsync("records", record)
			must(b, err)
			futs = append(futs, f)
		}
		for _, f := range futs {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				b.Fatal(err)
			}
		}
		_, err := obj.PutBytes(ctx, fmt.Sprintf("world-%d", g), world)
		must(b, err)
		if rev, err = commitKV.Update(ctx, "manifest", manifest, rev); err != nil {
			b.Fatal(err)
		}
		if g > 1 {
			must(b, obj.Delete(ctx, fmt.Sprintf("world-%d", g-1)))
		}
	}

	blocks, err := j.CreateKeyValue(ctx, js.KeyValueConfig{Bucket: "blocks"})
	must(b, err)
	brev, err := blocks.Create(ctx, "manifest", manifest)
	must(b, err)
	kv := func(g int) {
		for i := range 5 {
			_, err := blocks.Put(ctx, fmt.Sprintf("chunks.%d", g*5+i), record)
			must(b, err)
		}
		_, err := blocks.Put(ctx, fmt.Sprintf("world%d.0", g), world)
		must(b, err)
		if brev, err = blocks.Update(ctx, "manifest", manifest, brev); err != nil {
			b.Fatal(err)
		}
	}

	ways := []struct {
		name   string
		commit func(g int)
	}{{"stream", stream}, {"kv+object", kvObject}, {"kv", kv}}
	took := make([]time.Duration, len(ways))
	g := 0
	for b.Loop() {
		g++
		for k := range ways {
			k = (k + g) % len(ways)
			start := time.Now()
			ways[k].commit(g)
			took[k] += time.Since(start)
		}
	}
	for k, w := range ways {
		b.ReportMetric(float64(took[k].Microseconds())/1000/float64(g), "ms/commit@"+w.name)
		if k > 0 {
			b.ReportMetric(float64(took[k])/float64(took[0]), w.name+"/stream")
		}
	}
}
