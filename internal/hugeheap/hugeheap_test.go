package hugeheap

import "testing"

func TestPlan(t *testing.T) {
	const gib = 1 << 30
	madvise := "always [madvise] never\n"
	cases := []struct {
		name  string
		m     Machine
		bytes uint64
	}{
		{"per program, plenty of memory", Machine{THPEnabled: madvise, Overcommit: "0\n", MemoryBytes: 24 * gib}, rangeMaxBytes},
		{"a quarter of a small machine", Machine{THPEnabled: madvise, Overcommit: "1", MemoryBytes: 2 * gib}, gib / 2},
		{"too small to bother", Machine{THPEnabled: madvise, MemoryBytes: 128 << 20}, 0},
		{"always: nothing to add", Machine{THPEnabled: "[always] madvise never", MemoryBytes: 24 * gib}, 0},
		{"never: nothing allowed", Machine{THPEnabled: "always madvise [never]", MemoryBytes: 24 * gib}, 0},
		{"no such file", Machine{MemoryBytes: 24 * gib}, 0},
		{"strict overcommit", Machine{THPEnabled: madvise, Overcommit: "2\n", MemoryBytes: 24 * gib}, 0},
		{"GODEBUG disablethp=1", Machine{THPEnabled: madvise, GODEBUG: "gctrace=1,disablethp=1", MemoryBytes: 24 * gib}, 0},
		{"GODEBUG disablethp=0", Machine{THPEnabled: madvise, GODEBUG: "disablethp=0", MemoryBytes: 24 * gib}, rangeMaxBytes},
		{"GODEBUG: the last setting wins", Machine{THPEnabled: madvise, GODEBUG: "disablethp=1,disablethp=0", MemoryBytes: 24 * gib}, rangeMaxBytes},
		{"ulimit -v", Machine{THPEnabled: madvise, MemoryBytes: 24 * gib, AddressSpaceBytes: 8 * gib}, 0},
	}
	for _, c := range cases {
		bytes, why := Plan(c.m)
		if bytes != c.bytes {
			t.Errorf("%s: Plan = %d (%q), want %d", c.name, bytes, why, c.bytes)
		}
		if (bytes == 0) != (why != "") {
			t.Errorf("%s: Plan = %d with reason %q: a reason exactly when nothing is marked", c.name, bytes, why)
		}
	}
}
