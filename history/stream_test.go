package history

import (
	"encoding/binary"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// An operation's header numbers are written and read as encoding/binary's
// varints, byte for byte, whether they take the one-byte path or not.
func TestOpHeadVarintsAreEncodingBinarys(t *testing.T) {
	edges := []int64{0, 1, -1, 63, -64, 64, -65, 127, 128, math.MaxInt64, math.MinInt64}
	rapid.Check(t, func(t *rapid.T) {
		us := rapid.SliceOfN(rapid.OneOf(rapid.Uint64Range(0, 300), rapid.Uint64()), 1, 5).Draw(t, "unsigned")
		ss := rapid.SliceOfN(rapid.OneOf(rapid.SampledFrom(edges), rapid.Int64Range(-300, 300), rapid.Int64()), 1, 5).Draw(t, "signed")
		var h opHead
		var want []byte
		for i := range max(len(us), len(ss)) {
			if i < len(us) {
				h.uvarint(us[i])
				want = binary.AppendUvarint(want, us[i])
			}
			if i < len(ss) {
				h.varint(ss[i])
				want = binary.AppendVarint(want, ss[i])
			}
		}
		if string(h.b[:h.n]) != string(want) {
			t.Fatalf("header bytes %x, encoding/binary's %x", h.b[:h.n], want)
		}
		r := opReader{b: want}
		for i := range max(len(us), len(ss)) {
			if i < len(us) {
				if got := r.uvarint(); got != us[i] {
					t.Fatalf("unsigned %d read back as %d", us[i], got)
				}
			}
			if i < len(ss) {
				if got := r.varint(); got != ss[i] {
					t.Fatalf("signed %d read back as %d", ss[i], got)
				}
			}
		}
		if r.k != len(want) {
			t.Fatalf("read %d of %d bytes", r.k, len(want))
		}
	})
}
