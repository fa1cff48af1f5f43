package hugeheap

import (
	"os"
	"syscall"
	"unsafe"
)

const hugePageBytes = 2 << 20

func readMachine() Machine {
	m := Machine{GODEBUG: os.Getenv("GODEBUG")}
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		m.THPEnabled = string(b)
	}
	if b, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err == nil {
		m.Overcommit = string(b)
	}
	var info syscall.Sysinfo_t
	if syscall.Sysinfo(&info) == nil {
		m.MemoryBytes = uint64(info.Totalram) * uint64(info.Unit)
	}
	return m
}

// advise marks the whole huge pages inside b.
func advise(b []byte) error {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (lo + hugePageBytes - 1) &^ (hugePageBytes - 1)
	end := (lo + uintptr(len(b))) &^ (hugePageBytes - 1)
	if end <= start {
		return nil
	}
	return syscall.Madvise(b[start-lo:end-lo], syscall.MADV_HUGEPAGE)
}
