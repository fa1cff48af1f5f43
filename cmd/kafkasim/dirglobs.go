package main

import (
	"os"
	"path/filepath"
	"strings"
)

// expandDirGlobs expands the DIR arguments of a merge that hold a pattern
// (*, ? or [) no shell expanded: a container without a shell (the image is
// distroless; a Kubernetes Job's args reach the program as written) or a
// Windows prompt passes `/results/shard-*` as it is. A name that exists as
// written is kept as it is; a pattern that matches nothing is kept too, so
// that the merge refuses it by its name.
func expandDirGlobs(args []string) []string {
	var dirs []string
	for _, a := range args {
		if !strings.ContainsAny(a, "*?[") {
			dirs = append(dirs, a)
			continue
		}
		if _, err := os.Stat(a); err == nil {
			dirs = append(dirs, a)
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil || len(matches) == 0 {
			dirs = append(dirs, a)
			continue
		}
		dirs = append(dirs, matches...)
	}
	return dirs
}
