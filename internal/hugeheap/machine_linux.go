package hugeheap

import (
	"os"
	"syscall"
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
	var as syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &as) == nil && as.Cur != ^uint64(0) {
		m.AddressSpaceBytes = as.Cur
	}
	return m
}

// adviseRange marks the whole huge pages inside [start, end), which the
// caller keeps mapped (it holds the heap blocks there).
func adviseRange(start, end uintptr) error {
	start = (start + hugePageBytes - 1) &^ (hugePageBytes - 1)
	end &^= hugePageBytes - 1
	if end <= start {
		return nil
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_HUGEPAGE); errno != 0 {
		return errno
	}
	return nil
}
