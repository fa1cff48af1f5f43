package sim_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The determinism rules (docs/architecture.md), enforced on every non-test Go file
// under sim/ and model/. A violation here is how a simulator becomes a flaky
// test: a goroutine, a lock, the wall clock, the global generator, or a file
// read makes two runs of one seed differ.

var forbiddenImports = map[string]string{
	"sync":        "locks and wait groups mean concurrency; one run is one goroutine",
	"sync/atomic": "atomics mean concurrency; one run is one goroutine",
	"math/rand":   "the global generator is shared and unseeded; use math/rand/v2 streams from sim.Seed",
	"os":          "no file, environment or process access in the simulation",
	"os/exec":     "no processes in the simulation",
	"os/signal":   "no signals in the simulation",
	"io/ioutil":   "no file access in the simulation",
	"net":         "the simulation has its own network",
	"net/http":    "the simulation has its own network",
	"syscall":     "no system calls in the simulation",
	"unsafe":      "no memory tricks that depend on the runtime",
}

var forbiddenTimeFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true,
	"Tick": true, "NewTimer": true, "NewTicker": true,
}

// orderlessMarker on the line of a range over a map (or the line above it)
// declares that the loop's effect does not depend on iteration order (it fills
// another map, sums, or collects keys that are sorted right after).
const orderlessMarker = "kafkasim:orderless"

func simulationDirs(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..")
	var dirs []string
	for _, top := range []string{"sim", "model"} {
		base := filepath.Join(root, top)
		if _, err := os.Stat(base); err != nil {
			continue
		}
		filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	return dirs
}

type violation struct {
	pos  token.Position
	what string
}

func TestNoForbiddenConstructsInSimulation(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, dir := range simulationDirs(t) {
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			for _, f := range pkg.Files {
				files = append(files, f)
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("found %d files to check: the test is looking in the wrong place", len(files))
	}
	for _, v := range forbiddenConstructs(fset, files) {
		t.Errorf("%s: %s", v.pos, v.what)
	}
}

// TestForbiddenConstructsAreCaught shows the check has teeth: a file with one
// of each forbidden construct yields one violation each.
func TestForbiddenConstructsAreCaught(t *testing.T) {
	const src = `package bad

import (
	"math/rand"
	"os"
	"sync"
	clock "time"
)

var mu sync.Mutex

func f() {
	ch := make(chan int)
	go func() { ch <- 1 }()
	select {
	case v := <-ch:
		_ = v
	}
	_ = clock.Now()
	clock.Sleep(1)
	_ = rand.Int()
	_, _ = os.ReadFile("x")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, v := range forbiddenConstructs(fset, []*ast.File{f}) {
		got[strings.SplitN(v.what, ":", 2)[0]]++
	}
	for _, want := range []string{"import math/rand", "import os", "import sync", "go statement", "channel type",
		"channel send", "channel receive", "select statement", "time.Now", "time.Sleep"} {
		if got[want] == 0 {
			t.Errorf("%q not caught; caught %v", want, got)
		}
	}
}

func forbiddenConstructs(fset *token.FileSet, files []*ast.File) []violation {
	var found []violation
	report := func(pos token.Pos, what string) {
		found = append(found, violation{fset.Position(pos), what})
	}
	for _, f := range files {
		timeName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbiddenImports[path]; bad {
				report(imp.Pos(), "import "+path+": "+why)
			}
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				report(n.Pos(), "go statement: one run is one goroutine")
			case *ast.ChanType:
				report(n.Pos(), "channel type: one run is one goroutine")
			case *ast.SelectStmt:
				report(n.Pos(), "select statement: one run is one goroutine")
			case *ast.SendStmt:
				report(n.Pos(), "channel send: one run is one goroutine")
			case *ast.UnaryExpr:
				if n.Op == token.ARROW {
					report(n.Pos(), "channel receive: one run is one goroutine")
				}
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && forbiddenTimeFuncs[n.Sel.Name] {
					report(n.Pos(), "time."+n.Sel.Name+": virtual time only; read the node's clock through Env")
				}
			}
			return true
		})
	}
	return found
}

// TestMapIterationIsDeclaredOrderless type-checks sim/ and model/ and flags
// every range over a map that is not marked orderless: Go randomises map
// order, so a loop whose effect depends on it makes runs differ.
func TestMapIterationIsDeclaredOrderless(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks from source")
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	var problems []string
	for _, dir := range simulationDirs(t) {
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			var files []*ast.File
			names := make([]string, 0, len(pkg.Files))
			for name := range pkg.Files {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				files = append(files, pkg.Files[name])
			}
			info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
			conf := types.Config{Importer: imp}
			if _, err := conf.Check(dir, fset, files, info); err != nil {
				t.Fatalf("type-checking %s: %v", dir, err)
			}
			problems = append(problems, unmarkedMapRanges(fset, files, info)...)
		}
	}
	for _, p := range problems {
		t.Errorf("%s: range over a map: iterate sorted keys, or mark the loop // %s if its effect cannot depend on order", p, orderlessMarker)
	}
}

func unmarkedMapRanges(fset *token.FileSet, files []*ast.File, info *types.Info) []string {
	var problems []string
	for _, f := range files {
		marked := map[int]bool{}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.Contains(c.Text, orderlessMarker) {
					marked[fset.Position(c.Pos()).Line] = true
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			r, ok := n.(*ast.RangeStmt)
			if !ok {
				return true
			}
			if tv, ok := info.Types[r.X]; ok {
				if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
					line := fset.Position(r.Pos()).Line
					if !marked[line] && !marked[line-1] {
						problems = append(problems, fset.Position(r.Pos()).String())
					}
				}
			}
			return true
		})
	}
	return problems
}

func TestUnmarkedMapRangeIsCaught(t *testing.T) {
	const src = `package bad

type set map[string]bool

func f(s set, m map[int]int) (out []string) {
	for k := range s {
		out = append(out, k)
	}
	// kafkasim:orderless: sums
	for _, v := range m {
		_ = v
	}
	for i := range out {
		_ = i
	}
	return out
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bad.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{}).Check("bad", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := unmarkedMapRanges(fset, []*ast.File{f}, info)
	if len(got) != 1 || !strings.HasPrefix(got[0], "bad.go:6:") {
		t.Fatalf("want exactly the unmarked range over a named map type at line 6, got %v", got)
	}
}
