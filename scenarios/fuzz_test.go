package scenarios

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// FuzzParse: no input makes the loader panic; whatever it accepts resolves
// to a scenario that loads back and resolves to the same text again; what
// it refuses it explains in at most errorsMax one-line errors, in file
// order. `go test -fuzz FuzzParse ./scenarios/` explores further; the seed
// corpus (and testdata/fuzz/FuzzParse, the inputs fuzzing has found) runs
// with every `go test`.
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
		"topics: [{name: t, replica-assignment: [[1, 1]]}]", "name: x\nname: y", "faults: [{at: 1s, add-partitions: {count: 2}}]",
		// Empty items and keys without values.
		"topics:\n  -", "topics: [{name: t}]\nproducers:\n  -\nconsumers: [~]", "faults: [~, {at: 1s, crash: [broker-1, ~]}]",
		"cluster:\ntopics:\nexpect:", "topics: [{name: }]",
		// Aliases: shared parts, and parts repeated past any use.
		"topics: [{name: t}]\nproducers: [{name: a, config: &c {acks: all}}, {name: b, config: *c}]",
		"topics: [{name: t}]\nproducers: [&p {count: 200}, *p, *p]",
		"faults: [&f {at: 1s, crash: &t [broker-1, broker-2]}, *f, {at: 2s, isolate: *t}]",
		"topics: [{name: t, replica-assignment: &a [&r [1], *r, *r]}, {name: u, replica-assignment: *a}]",
		// Errors in several sections, and cross-checks over them.
		"duration: 5\ncluster: {brokers: 65}\ntopics: [{name: t, replication.factor: 4}]\nfaults: [{at: 9s, crash: broker-5}]",
		"nemesis: [{fault: partition, shape: halves, among: role(broker), every: 1s..2s, down: 3s}]",
		// Rules of faults that do not end.
		"nemesis: [{fault: disconnect, every: 1s}, {fault: disk, disk: read-error, every: 2s}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			checkErrors(t, err)
			return
		}
		out, err := s.Resolved()
		if err != nil {
			t.Fatalf("accepted, but cannot resolve: %v", err)
		}
		again, err := Parse("resolved.yaml", out)
		if err != nil {
			t.Fatalf("accepted, but its resolved form does not load: %v\n%s", err, out)
		}
		out2, err := again.Resolved()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("the resolved form resolves to another (%v):\n%s\n---\n%s", err, out, out2)
		}
	})
}

// checkErrors checks the form of the loader's errors.
func checkErrors(t *testing.T, err error) {
	var es Errors
	if !errors.As(err, &es) {
		var one *Error
		if !errors.As(err, &one) {
			t.Fatalf("an error of type %T: %v", err, err)
		}
		es = Errors{one}
	}
	if len(es) == 0 || len(es) > errorsMax+1 {
		t.Fatalf("%d errors: %v", len(es), err)
	}
	for i, e := range es {
		if strings.ContainsAny(e.Error(), "\n\r") {
			t.Fatalf("an error of more than one line: %q", e.Error())
		}
		if i > 0 && e.Line != 0 && (es[i-1].Line > e.Line || es[i-1].Line == e.Line && es[i-1].Column > e.Column) {
			t.Fatalf("errors out of file order:\n%v", err)
		}
	}
}
