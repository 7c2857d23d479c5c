module github.com/arksave/arksave/jetstream

go 1.26.0

replace github.com/arksave/arksave => ../

require (
	github.com/arksave/arksave v0.0.0-00010101000000-000000000000
	github.com/nats-io/nats.go v1.55.0
	github.com/nats-io/nuid v1.0.1
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
