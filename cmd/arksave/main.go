// Command arksave looks inside, checks, mends, copies and converts arksave
// saves and their files; see package github.com/arksave/arksave/internal/cli for its
// commands. This build reaches save directories; the build in
// github.com/arksave/arksave/jetstream/cmd/arksave also reaches worlds in
// NATS JetStream (nats://host:4222/<world>).
package main

import (
	"os"

	"github.com/arksave/arksave/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
