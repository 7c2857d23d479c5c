// Package e2e tests the demo binary from the outside: the headless run on a
// machine without a display, and the real window under xvfb-run with a
// screenshot. It holds tests only.
package e2e
