module github.com/arksave/arksave

go 1.24.0

require (
	github.com/mlange-42/ark v0.8.3
	github.com/pierrec/lz4/v4 v4.1.33
)
