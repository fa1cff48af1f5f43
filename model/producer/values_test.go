package producer

import (
	"strconv"
	"testing"
)

// The workload's values are "<prefix>:<seq>" (and " <payload>"), built a
// block at a time with the numbers counted up in place: across blocks and
// across every carry to a longer number, each is what formatting it gives.
func TestValuesAreThePrefixAndTheSequence(t *testing.T) {
	for _, payload := range []string{"", "some payload"} {
		for _, start := range []int{0, 1, 5, 9, 95, 990, 9_990, 99_999_950, 1 << 40} {
			p := &workload{valuePrefix: "p-3", cfg: Config{WorkloadConfig: WorkloadConfig{Payload: payload}}}
			p.seq = start
			for range 3 * valuesPerBlock {
				want := "p-3:" + strconv.Itoa(p.seq)
				if payload != "" {
					want += " " + payload
				}
				if got := p.nextValue(payload); got != want {
					t.Fatalf("value of send %d (from %d) = %q, want %q", p.seq, start, got, want)
				}
				p.seq++
			}
		}
	}
}

// Key names are "k<n>", cut from one block for the first keyNamesMax keys
// and built each time above them, whatever order keys are drawn in.
func TestKeyNamesAreKAndTheNumber(t *testing.T) {
	for _, keys := range []int{1, 10, 1000, keyNamesMax, 3 * keyNamesMax} {
		p := &workload{cfg: Config{WorkloadConfig: WorkloadConfig{Keys: keys}}}
		for _, n := range []int{keys - 1, 0, keys / 2, 9, 10, 99, 100, keyNamesMax - 1, keyNamesMax, keys - 1} {
			if n < 0 || n >= keys {
				continue
			}
			if got, want := p.keyName(n), "k"+strconv.Itoa(n); got != want {
				t.Fatalf("key %d of %d: name %q, want %q", n, keys, got, want)
			}
		}
	}
}
