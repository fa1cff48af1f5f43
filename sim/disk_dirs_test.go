package sim

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestDiskDirsListsWhatAPassFinds adds and removes names in nested
// directories at random and compares the index's list, for prefixes that
// end at, inside and beyond directory names, with a pass over every name
// (what Disk.List did).
func TestDiskDirsListsWhatAPassFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pool := []string{"top", "t2", "a/x", "a/y", "a/b/x", "a/b/c/x", "ab/x", "a-1/x", "b/x", "b/x.log", "b/x.snap", "a/bx"}
	prefixes := []string{"", "a", "a/", "a/b", "a/b/", "a/b/c/", "ab", "b/x", "b/x.", "t", "top", "zz", "a/bx", "a/x/"}
	var x diskDirs
	all := map[string]*fileEntry{}
	for step := range 2000 {
		name := pool[rng.IntN(len(pool))]
		if e := all[name]; e != nil {
			if rng.IntN(3) == 0 {
				e.cache = nil // held for a pending operation: not listed
			} else {
				delete(all, name)
				x.remove(name)
			}
		} else {
			e := &fileEntry{name: name, cache: &file{}}
			all[name] = e
			x.add(name, e)
		}
		for _, prefix := range prefixes {
			var want []string
			for n, e := range all {
				if e.cache != nil && strings.HasPrefix(n, prefix) {
					want = append(want, n)
				}
			}
			sort.Strings(want)
			if got := x.list(prefix); !slices.Equal(got, want) {
				t.Fatalf("step %d: list(%q) = %v, want %v", step, prefix, got, want)
			}
		}
	}
}
