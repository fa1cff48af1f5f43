package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
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

// advisedHere keeps the block the advise test marks, so that no later
// allocation in this process reuses its range and passes for Reserve's.
var advisedHere []byte

func TestAdviseMarksTheWholeHugePagesInside(t *testing.T) {
	b := make([]byte, 8*hugePageBytes)
	advisedHere = b
	if err := adviseRange(addrOf(b), addrOf(b)+uintptr(len(b))); err != nil {
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

// Blocks that lie end to end become one run; a gap starts another.
func TestRunsOfMergesAdjacentBlocks(t *testing.T) {
	const mib = 1 << 20
	big := make([]byte, 10*mib)
	base := addrOf(big)
	got := runsOf([][]byte{big[6*mib : 8*mib], big[0 : 2*mib], big[2*mib : 4*mib], big[8*mib : 9*mib]})
	want := []addrRange{{base, base + 4*mib}, {base + 6*mib, base + 9*mib}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("runs %v, want %v", got, want)
	}
}

// rssBytes is the process's resident set, from /proc/self/statm.
func rssBytes(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no statm: %v", err)
	}
	var size, resident uint64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		t.Fatal(err)
	}
	return resident * uint64(os.Getpagesize())
}

// Reserving takes address space, not memory: at most the blocks that start
// in memory the heap used before are zeroed (touched).
func TestReserveTouchesAlmostNothing(t *testing.T) {
	if m := readMachine(); m.AddressSpaceBytes > 0 {
		t.Skipf("the address space is limited to %d MiB (ulimit -v)", m.AddressSpaceBytes>>20)
	}
	before := rssBytes(t)
	if err := reserve(1 << 30); err != nil {
		t.Fatal(err)
	}
	if grew := int64(rssBytes(t)) - int64(before); grew > 64<<20 {
		t.Fatalf("reserving 1 GiB grew the resident set by %d MiB", grew>>20)
	}
}
