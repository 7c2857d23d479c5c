module github.com/arksave/arksave/arktools

go 1.25

replace github.com/arksave/arksave => ../

require (
	github.com/arksave/arksave v0.0.0-00010101000000-000000000000
	github.com/mlange-42/ark v0.8.3
	github.com/mlange-42/ark-tools v0.3.1
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)
