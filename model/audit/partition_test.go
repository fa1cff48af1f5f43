package audit

import (
	"testing"
	"unsafe"
)

// The audit keeps a key for every committed batch of the run.
func TestBatchKeyTakesFortyBytes(t *testing.T) {
	if s := unsafe.Sizeof(batchKey{}); s != 40 {
		t.Fatalf("batchKey takes %d bytes, want 40", s)
	}
}
