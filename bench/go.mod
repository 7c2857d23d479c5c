module github.com/arksave/arksave/bench

go 1.24.0

replace github.com/arksave/arksave => ../

require (
	github.com/goccy/go-json v0.10.6 // indirect
	github.com/mlange-42/ark v0.8.3 // indirect
	github.com/mlange-42/ark-serde v0.3.2 // indirect
)
