package checker

import (
	"slices"
	"strconv"
)

// Helpers that write a finding's example: numbers in details, capped lists,
// sorted operation indexes. Every check uses them.

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func capList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), "…")
}

func capOps(xs []int64, n int) []int64 {
	if len(xs) <= n {
		return xs
	}
	return xs[:n]
}

func sortedUnique(xs []int64) []int64 {
	slices.Sort(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
