package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file read through the exported reader gets a scenario's errors: each at
// its line and column, naming the key's path, in file order, with a
// suggestion for a misspelled key.
func TestYAMLReaderErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.yaml")
	os.WriteFile(path, []byte("seeds: many\nnmae: x\nitems: [a, ~, c]\nname: ../x\n"), 0o644)
	r, root, err := ReadYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, f := range r.Fields(root, "", []string{"name", "seeds", "items"}) {
		switch f.Name {
		case "seeds":
			r.Int(f, 1, 10)
		case "items":
			if f.Path != "items" || f.Key.Line != 3 {
				t.Errorf("field %q at line %d", f.Path, f.Key.Line)
			}
			items = r.Strings(f)
		case "name":
			if got := r.Name(f, "name"); got != "" {
				t.Errorf("name %q accepted", got)
			}
		}
	}
	if strings.Join(items, ",") != "a,c" {
		t.Errorf("items = %v", items)
	}
	// Found last, reported first: the errors come in file order.
	r.Fail(root, "", "checked at the end")
	if r.Failures() != 5 {
		t.Errorf("failures = %d", r.Failures())
	}
	got := r.Report().Error()
	for _, want := range []string{
		`f.yaml:1:8: seeds: want an integer, got "many"`,
		`f.yaml:2:1: nmae: unknown key (did you mean "name"?)`,
		"f.yaml:3:12: items[1]: an empty item",
		`f.yaml:4:7: name: "../x" is not a valid name`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if lines := strings.Split(got, "\n"); len(lines) != 5 || !strings.HasSuffix(lines[0], "f.yaml:1:1: checked at the end") {
		t.Errorf("errors not one a line, in file order:\n%s", got)
	}
	if _, _, err := ReadYAML(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml: cannot read") {
		t.Errorf("missing file: %v", err)
	}
}

func TestYAMLHelpers(t *testing.T) {
	for _, tc := range []struct {
		name string
		safe bool
	}{{"acks-all", true}, {"a.b_c-1", true}, {"-x", false}, {".hidden", false}, {"a/b", false}, {"", false}, {"x y", false}} {
		if got := IsSafeName(tc.name); got != tc.safe {
			t.Errorf("IsSafeName(%q) = %v", tc.name, got)
		}
	}
	if got := ItemPath("axes.acks", 2); got != "axes.acks[2]" {
		t.Errorf("ItemPath = %q", got)
	}
	for _, tc := range []struct{ got, want string }{
		{"lingr.ms", "linger.ms"}, {"acks", "acks"}, {"zzzzzz", ""},
	} {
		if s := Suggest(tc.got, []string{"acks", "linger.ms", "batch.size"}); s != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.got, s, tc.want)
		}
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{{"acks", true}, {"min.insync.replicas", true}, {"isolation.level", true}, {"nemesis-intensity", false}, {"ackz", false}} {
		if got := IsKafkaKey(tc.key); got != tc.want {
			t.Errorf("IsKafkaKey(%q) = %v", tc.key, got)
		}
	}
	names := KafkaKeyNames()
	for _, k := range names {
		if !IsKafkaKey(k) {
			t.Errorf("KafkaKeyNames lists %q, which IsKafkaKey refuses", k)
		}
	}
	if !contains(names, "acks") || !contains(names, "isolation.level") {
		t.Errorf("KafkaKeyNames = %v", names)
	}
}
