module github.com/arksave/arksave

go 1.25

require (
	github.com/klauspost/compress v1.20.3
	github.com/mlange-42/ark v0.8.3
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/vmihailenco/msgpack/v5 v5.4.1
)

require github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
