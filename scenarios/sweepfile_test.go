package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A value given twice on one axis would run a cell twice and count its runs
// twice: an error naming the value. A rate is written as in a scenario.
func TestSweepAxisValues(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile("../sweeps/batching-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "batching-base.yaml"), base, 0o644)
	write := func(axes string) string {
		p := filepath.Join(dir, "s.yaml")
		os.WriteFile(p, []byte("name: s\nbase: batching-base.yaml\nseeds: 1\naxes:\n"+axes), 0o644)
		return p
	}
	_, err = LoadSweepFile(write("  acks: [all, \"1\", all]\n"))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:5") || !strings.Contains(err.Error(), `"all" is value 0 too`) {
		t.Fatalf("duplicate axis value: %v", err)
	}
	sw, err := LoadSweepFile(write("  rate: [50/s, 200]\n"))
	if err != nil {
		t.Fatalf("rate axis: %v", err)
	}
	s := *sw.Base
	if err := s.Apply("rate", "50/s"); err != nil || s.Producers[0].Rate != 50 {
		t.Fatalf("rate 50/s: %v, rate %v", err, s.Producers[0].Rate)
	}
}
