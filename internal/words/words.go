// Package words holds the little English the module's messages need.
package words

import "fmt"

// Count writes n with the noun in its number: "1 problem", "2 problems",
// "0 problems".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
