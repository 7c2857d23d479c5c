package jetstream_test

import (
	"fmt"
	"os"
	"time"

	"github.com/mlange-42/ark/ecs"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/vfs"
)

// flat is a chunk generator: stone below row 8, air above.
type flat struct{}

func (flat) Version() uint32 { return 1 }
func (flat) Generate(x, y int32, seed uint64, dst []uint32) {
	size := 1
	for size*size < len(dst) {
		size++
	}
	for i := range dst {
		dst[i] = 0
		if int(y)*size+i/size > 8 {
			dst[i] = 2
		}
	}
}

// A game that saves its world in NATS JetStream: importing the package
// makes Plugin.Dir take a nats:// location. The server here is embedded,
// as `nats-server -js -sd <dir>` would run it.
func Example() {
	dir, _ := os.MkdirTemp("", "arksave-jetstream-example-")
	defer os.RemoveAll(dir)
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		fmt.Println("no server")
		return
	}

	world := ecs.NewWorld()
	systems, err := arksave.Plugin{Dir: s.ClientURL() + "/sand", ChunkSize: 64, Generator: flat{}}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	handle := persistence.Save()
	for !handle.IsComplete() {
		for _, sys := range systems {
			sys.Update(world)
		}
	}
	fmt.Println("saved generation", persistence.Generation(), "error:", handle.Err())
	fmt.Println("close:", persistence.Close())
	// Output:
	// saved generation 1 error: <nil>
	// close: <nil>
}

func ExampleParseLocation() {
	l, err := jetstream.ParseLocation("nats://alice:secret@127.0.0.1:4222/sand?lease=30s&replicas=3&tls_ca=ca.pem")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.World, l.Options.Replicas, l.Options.LeaseTTL, l.CA, vfs.Redact(l.Servers[0]))
	// Output: sand 3 30s ca.pem nats://alice:xxxxx@127.0.0.1:4222
}
