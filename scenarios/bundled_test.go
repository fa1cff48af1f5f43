package scenarios

import (
	"os"
	"testing"
)

// A bundled scenario runs by its name from any folder: one where a folder
// of that name stands (a run store's root holds one per scenario) too. A
// file of that name wins, so that an edited copy is the one that runs.
func TestOpenTakesABundledNameOverAFolder(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("acks-all-safe", 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open("acks-all-safe")
	if err != nil || s.Name != "acks-all-safe" {
		t.Fatalf("Open(acks-all-safe) beside a folder of that name: %v", err)
	}
	mine := "name: mine\nduration: 5s\n"
	if err := os.WriteFile("isr-ack-conditions", []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Open("isr-ack-conditions"); err != nil || s.Name != "mine" {
		t.Fatalf("a file named like a bundled scenario: %v, %+v", err, s)
	}
	if _, err := Open("no-such-scenario"); err == nil {
		t.Fatal("an unknown name opened")
	}
}
