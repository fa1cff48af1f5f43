// Package shardset reads and writes the shard a campaign's output folder
// holds: "K/N" for one shard, "0..2,5/8" for several merged.
package shardset

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ParseFlag reads a --shard flag: one shard, K/N with 0 <= K < N.
func ParseFlag(s string) (k, n int, err error) {
	ks, ns, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(ks)
	ni, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 0 || ki >= ni {
		return 0, 0, fmt.Errorf("--shard %q: want K/N with 0 <= K < N", s)
	}
	return ki, ni, nil
}

// Parse reads a summary's shard, "K/N" or a merged output's "0..2,5/8": the
// indices it holds, of N.
func Parse(s string) ([]int, int, error) {
	k, n, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 {
		return nil, 0, fmt.Errorf("shard %q: want K/N", s)
	}
	var set []int
	for _, part := range strings.Split(k, ",") {
		lo, hi, isRange := strings.Cut(part, "..")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= count {
			return nil, 0, fmt.Errorf("shard %q: want K/N with 0 <= K < N", s)
		}
		for i := a; i <= b; i++ {
			set = append(set, i)
		}
	}
	return set, count, nil
}

// String writes a set of shard indices of n as a summary's shard does:
// "2/4" for one, ranges joined by commas for more ("0..3/4", "0..1,3/4").
func String(set []int, n int) string {
	set = slices.Clone(set)
	sort.Ints(set)
	var parts []string
	for i := 0; i < len(set); {
		j := i
		for j+1 < len(set) && set[j+1] == set[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(set[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d..%d", set[i], set[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",") + "/" + strconv.Itoa(n)
}
