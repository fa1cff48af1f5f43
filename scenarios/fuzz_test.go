package scenarios

import (
	"io/fs"
	"testing"
)

// FuzzParse: no input makes the loader panic; whatever it accepts resolves
// to a scenario that loads back. `go test -fuzz FuzzParse ./scenarios/`
// explores further; the seed corpus runs with every `go test`.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	fs.WalkDir(Bundled, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := fs.ReadFile(Bundled, p)
			f.Add(data)
		}
		return nil
	})
	for _, s := range []string{"", "[]", "5", "topics: 5", "faults: [5]", "faults: [{at: 1s}]", "cluster: {brokers: [1]}",
		"a: &x {b: *x}", "topics: [{name: t, partitions: 0}]", "producers: [{rate: -1/s}]", "nemesis: [{fault: crash}]",
		"faults: [{at: 1s, partition: [[], []]}]", "expect: {converged: maybe}", "faults: [{at: 1s, disk: {fault: wipe}}]",
		"topics: [{name: t, replica-assignment: [[1, 1]]}]", "name: x\nname: y", "faults: [{at: 1s, add-partitions: {count: 2}}]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		out, err := s.Resolved()
		if err != nil {
			t.Fatalf("accepted, but cannot resolve: %v", err)
		}
		if _, err := Parse("resolved.yaml", out); err != nil {
			t.Fatalf("accepted, but its resolved form does not load: %v\n%s", err, out)
		}
	})
}
