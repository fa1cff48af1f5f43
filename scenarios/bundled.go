package scenarios

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Bundled holds the scenario files shipped with kafkasim: the teaching
// scenarios of the seeds and one per bug-zoo switch under bugzoo/. They are
// compiled into the binary, so `kafkasim run acks-all-safe` works from any
// folder.
//
//go:embed *.yaml bugzoo/*.yaml
var Bundled embed.FS

// BundledNames lists the bundled scenarios by the name that runs them:
// the file name without ".yaml", under "bugzoo/" for the bug zoo's.
func BundledNames() []string {
	var names []string
	fs.WalkDir(Bundled, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			names = append(names, strings.TrimSuffix(p, ".yaml"))
		}
		return err
	})
	sort.Strings(names)
	return names
}

// BundledSource returns a bundled scenario's file by its name ("acks-all-safe",
// "bugzoo/hw-truncation"; a trailing ".yaml" or a leading "scenarios/" is
// accepted too), and reports whether there is one.
func BundledSource(name string) ([]byte, bool) {
	name, ok := bundledName(name)
	if !ok {
		return nil, false
	}
	data, err := fs.ReadFile(Bundled, name+".yaml")
	if err != nil {
		return nil, false
	}
	return data, true
}

// bundledName is a command line's name for a bundled scenario as BundledNames
// lists it.
func bundledName(arg string) (string, bool) {
	name := strings.TrimSuffix(path.Clean(strings.TrimPrefix(arg, "scenarios/")), ".yaml")
	if name == "" || name == "." || strings.HasPrefix(name, "..") || strings.HasPrefix(name, "/") {
		return "", false
	}
	return name, true
}

// Open loads a scenario named on a command line: a file, or else a bundled
// scenario by name. A file wins over a bundled scenario of the same name, so
// that an edited copy in the working folder is the one that runs; a folder
// does not (a run store's root holds one per scenario).
func Open(arg string) (*Scenario, error) {
	st, err := os.Stat(arg)
	if (err == nil && !st.IsDir()) || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
		return LoadFile(arg)
	}
	if data, ok := BundledSource(arg); ok {
		name, _ := bundledName(arg)
		return Parse("scenarios/"+name+".yaml", data)
	}
	if err == nil {
		return LoadFile(arg) // a folder: LoadFile says it is not a file
	}
	return nil, &Error{File: arg, Msg: "no such file, and no bundled scenario of that name (kafkasim scenarios list names them)"}
}
