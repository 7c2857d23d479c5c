// Package testkit holds the two assertions every test package of the
// module shares. The kits for particular layers sit in its subpackages
// (savetest, contract, killtest, terrain, gametest).
package testkit

import "testing"

// Must stops the test at once when err is not nil: the steps after it
// depend on it.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Expect stops the test at once when ok is false, with the message
// format and args describe.
func Expect(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}
