package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags line of the mapping holding addr, from
// /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}

func hasHugeFlag(flags string) bool {
	for _, f := range strings.Fields(flags) {
		if f == "hg" {
			return true
		}
	}
	return false
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// advisedHere keeps the block the advise test marks, so that no later
// allocation in this process reuses its range and passes for Reserve's.
var advisedHere []byte

func TestAdviseMarksTheWholeHugePagesInside(t *testing.T) {
	b := make([]byte, 8*hugePageBytes)
	advisedHere = b
	if err := advise(b); err != nil {
		t.Fatal(err)
	}
	inside := (addrOf(b) + 2*hugePageBytes - 1) &^ (hugePageBytes - 1)
	if flags := vmFlags(t, inside); !hasHugeFlag(flags) {
		t.Fatalf("a huge page inside the advised block is not marked: %s", flags)
	}
}

// The point of Reserve: memory the heap takes after it lies in the marked
// range (Go hands out free pages lowest address first). If Go's allocator
// ever stops doing so, this fails, and the benefit is gone.
func TestHeapGrowsIntoTheReservedRange(t *testing.T) {
	if err := reserve(rangeMinBytes); err != nil {
		t.Fatal(err)
	}
	later := make([]byte, 16<<20)
	if flags := vmFlags(t, addrOf(later)+hugePageBytes); !hasHugeFlag(flags) {
		t.Fatalf("a block allocated after Reserve is not in the marked range: %s", flags)
	}
	runtime.KeepAlive(later)
}
