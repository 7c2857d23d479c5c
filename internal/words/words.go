// Package words holds the little English the module's messages need.
package words

import (
	"fmt"
	"strings"
)

// Count writes n with the noun in its number: "1 problem", "2 problems",
// "0 problems".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// FirstThree joins the first three items with "; " and counts the rest:
// "a; b; c; and 2 more".
func FirstThree[T fmt.Stringer](items []T) string {
	var parts []string
	for i, it := range items {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(items)-i))
			break
		}
		parts = append(parts, it.String())
	}
	return strings.Join(parts, "; ")
}
