// Command arksave is the arksave command line (package
// github.com/arksave/arksave/internal/cli) built with the NATS JetStream backend:
// every command that takes a save also takes a world in JetStream,
//
//	arksave check nats://host:4222/<world>
//	arksave copy ./saves/mine nats://user:pass@host:4222/<world>
//
// with credentials in the location or a creds or nkey file, and TLS with a
// CA, as parameters (see jetstream.ParseLocation).
package main

import (
	"os"

	"github.com/arksave/arksave/internal/cli"
	_ "github.com/arksave/arksave/jetstream" // registers nats://
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
