module github.com/arksave/arksave/bench

go 1.24.0

replace github.com/arksave/arksave => ../
