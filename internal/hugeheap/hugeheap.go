// Package hugeheap asks the kernel to back the Go heap with transparent huge
// pages (2 MiB) where the machine leaves that choice to each program.
//
// Why: a long run keeps its history and logs (about a gigabyte on the data
// plane's benchmark), and on a virtual machine a 4 KiB page costs twice —
// a fault when first touched (about 10 µs on the VM where this was
// measured: 295 k faults a run) and a two-level page walk on every TLB
// miss. Backed by 2 MiB pages the same run takes 7 k faults and 25–30% less
// time (the user time most of all). Linux's usual setting,
// transparent_hugepage/enabled = madvise, gives huge pages only to memory a
// program marks with madvise(MADV_HUGEPAGE), and Go no longer marks its
// heap (since Go 1.21.1).
//
// How: Go maps its heap as it grows and hands out free pages lowest address
// first. So Reserve allocates blocks before the run — address space only,
// no page of them is touched, but for a block that starts in a gap the
// heap used before (see ballastBlockBytes) — marks their range, and frees
// them: the run's heap then grows into the marked range, and the mark stays
// on the range when Go returns free pages to the kernel (MADV_DONTNEED
// keeps it). A heap that outgrows the range continues on ordinary pages.
// (Go zeroes what it hands out of the range later, as it does any memory
// its heap used before: the kernel's zeroing is done twice, which costs far
// less than the faults it saves.)
//
// When not: on another OS; when the machine's setting is "always" (nothing
// to add) or "never" (nothing allowed); under strict overcommit
// (vm.overcommit_memory = 2, where reserving counts against the commit
// limit) or a limited address space (ulimit -v); when GODEBUG has disablethp=1 (Go's own switch to keep the heap
// off huge pages). The range is at most a quarter of physical memory and 4
// GiB, so that the kernel's heuristic overcommit check never refuses it (Go
// would die of a refused heap mapping).
//
// Only speed and memory layout change: nothing a run computes depends on
// where its objects live.
package hugeheap

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// rangeMaxBytes bounds the marked range: twice and more what the data
// plane's benchmark keeps, small next to a gigabyte machine's address space.
const (
	rangeMaxBytes = 4 << 30
	rangeMinBytes = 64 << 20
)

// Machine is what the decision reads from the system.
type Machine struct {
	// THPEnabled is /sys/kernel/mm/transparent_hugepage/enabled, e.g.
	// "always [madvise] never" (empty where there is no such file).
	THPEnabled string
	// Overcommit is /proc/sys/vm/overcommit_memory ("0", "1" or "2").
	Overcommit string
	// GODEBUG is the environment variable's value.
	GODEBUG string
	// MemoryBytes is the physical memory.
	MemoryBytes uint64
	// AddressSpaceBytes is the process's address-space limit (ulimit -v),
	// 0 when unlimited: reserving counts against it, and Go dies of a heap
	// mapping it refuses.
	AddressSpaceBytes uint64
}

// Plan is how many bytes of heap to mark, or 0 and why not.
func Plan(m Machine) (bytes uint64, why string) {
	switch {
	case !strings.Contains(m.THPEnabled, "[madvise]"):
		if m.THPEnabled == "" {
			return 0, "no transparent huge pages on this system"
		}
		return 0, "transparent huge pages are not per program here: " + m.THPEnabled
	case strings.TrimSpace(m.Overcommit) == "2":
		return 0, "strict overcommit (vm.overcommit_memory = 2)"
	case godebugDisablesTHP(m.GODEBUG):
		return 0, "GODEBUG disablethp=1"
	case m.AddressSpaceBytes > 0:
		return 0, "the address space is limited (ulimit -v)"
	}
	bytes = min(m.MemoryBytes/4, rangeMaxBytes)
	if bytes < rangeMinBytes {
		return 0, "too little memory"
	}
	return bytes, ""
}

// godebugDisablesTHP reports whether GODEBUG's last disablethp setting is
// 1 (later settings win, as Go reads them).
func godebugDisablesTHP(godebug string) bool {
	on := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			on = v == "1"
		}
	}
	return on
}

// ballast holds the blocks while they are marked: a package variable, so
// the compiler cannot keep them off the heap.
var ballast [][]byte

// ballastBlockBytes: the range is taken in blocks, because Go zeroes a
// block before handing it out when it starts in memory the heap used
// before (a free gap just below the fresh memory): a single 4 GiB block
// starting there was zeroed whole, its 4 KiB pages touched before they
// were marked — once in a dozen runs, 31 s and 4 GiB of RSS instead of 6 s
// and 0.8. In blocks, at most the gap's blocks are zeroed.
const ballastBlockBytes = 16 << 20

var once struct {
	sync.Once
	bytes uint64
	why   string
	err   error
}

// Reserve marks a range of heap address space for huge pages, if the
// machine allows it (Plan), and returns its size: 0 and why when it does
// nothing. Call it first thing in main: pages the heap touched before stay
// as they are. Later calls return the first call's answer.
func Reserve() (bytes uint64, why string, err error) {
	once.Do(func() {
		once.bytes, once.why = Plan(readMachine())
		if once.bytes == 0 {
			return
		}
		if once.err = reserve(int(once.bytes)); once.err != nil {
			once.bytes = 0
		}
	})
	return once.bytes, once.why, once.err
}

func reserve(n int) error {
	ballast = make([][]byte, 0, max(n/ballastBlockBytes, 1))
	for range cap(ballast) {
		ballast = append(ballast, make([]byte, ballastBlockBytes))
	}
	var err error
	for _, r := range runsOf(ballast) {
		if e := adviseRange(r.start, r.end); e != nil && err == nil {
			err = e
		}
	}
	ballast = nil
	runtime.GC()
	return err
}

// addrRange is [start, end) of the address space.
type addrRange struct{ start, end uintptr }

// runsOf merges blocks that lie end to end (Go places them so, mostly)
// into runs, so that a huge page spanning two blocks is marked too.
func runsOf(blocks [][]byte) []addrRange {
	var rs []addrRange
	for _, b := range blocks {
		rs = append(rs, addrRange{addrOf(b), addrOf(b) + uintptr(len(b))})
	}
	slices.SortFunc(rs, func(a, b addrRange) int { return cmp.Compare(a.start, b.start) })
	var runs []addrRange
	for _, r := range rs {
		if n := len(runs); n > 0 && runs[n-1].end == r.start {
			runs[n-1].end = r.end
			continue
		}
		runs = append(runs, r)
	}
	return runs
}
