package sim

import (
	"slices"
	"sort"
	"strings"
)

// diskDirs indexes a disk's entries by directory, for List: a broker of
// hundreds of partitions lists each partition's directory when it opens
// its log, and a pass over every file of the disk for each showed in
// profiles of big clusters (a tenth of a busy run with restarts).
type diskDirs struct {
	// byDir holds the entries under each directory's name with its
	// trailing slash ("" for the root), keys the same names, sorted.
	byDir map[string]map[string]*fileEntry
	keys  []string
}

// dirKey is the directory part of name, with its trailing slash.
func dirKey(name string) string { return name[:strings.LastIndexByte(name, '/')+1] }

func (x *diskDirs) add(name string, e *fileEntry) {
	k := dirKey(name)
	m := x.byDir[k]
	if m == nil {
		if x.byDir == nil {
			x.byDir = map[string]map[string]*fileEntry{}
		}
		m = map[string]*fileEntry{}
		x.byDir[k] = m
		i, _ := slices.BinarySearch(x.keys, k)
		x.keys = slices.Insert(x.keys, i, k)
	}
	m[name] = e
}

func (x *diskDirs) remove(name string) {
	k := dirKey(name)
	m := x.byDir[k]
	delete(m, name)
	if m != nil && len(m) == 0 {
		delete(x.byDir, k)
		if i, ok := slices.BinarySearch(x.keys, k); ok {
			x.keys = slices.Delete(x.keys, i, i+1)
		}
	}
}

// list returns the names in the page cache that start with prefix, sorted:
// those of every directory whose name starts with prefix, and those of the
// directory prefix ends in whose names start with it.
func (x *diskDirs) list(prefix string) []string {
	var names []string
	for i := sort.SearchStrings(x.keys, prefix); i < len(x.keys) && strings.HasPrefix(x.keys[i], prefix); i++ {
		for name, e := range x.byDir[x.keys[i]] { // kafkasim:orderless: sorted below
			if e.cache != nil {
				names = append(names, name)
			}
		}
	}
	if k := dirKey(prefix); k != prefix {
		for name, e := range x.byDir[k] { // kafkasim:orderless: sorted below
			if e.cache != nil && strings.HasPrefix(name, prefix) {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}
