// Package plural writes a count with its noun ("1 run", "2 runs", "3
// batches"), so that the console, the report and the summaries never say
// "1 failures" and every command says it the same way.
package plural

import (
	"fmt"
	"strings"
)

// Count writes n and noun, the noun in the plural unless n is 1: "s" after
// most nouns, "es" after one ending in ch, sh, s or x ("batches").
func Count[N ~int | ~int64 | ~uint64](n N, noun string) string {
	count := fmt.Sprint(n)
	if n == 1 {
		return count + " " + noun
	}
	for _, end := range []string{"ch", "sh", "s", "x"} {
		if strings.HasSuffix(noun, end) {
			return count + " " + noun + "es"
		}
	}
	return count + " " + noun + "s"
}

// Times says how often: "once", "2 times".
func Times(n int) string {
	if n == 1 {
		return "once"
	}
	return Count(n, "time")
}
