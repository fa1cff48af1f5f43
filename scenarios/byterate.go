package scenarios

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Byte rates: cluster.network.bandwidth and cluster.disk.write-throughput.
//
// A rate is a number and a unit, "125MB/s", "1.5GB/s", "1Gbit/s", or
// "unlimited" (bytes cost no time: the default). Decimal prefixes are
// powers of 1000, as network and Kafka people count rates (Kafka's quotas
// and byte-rate metrics, link speeds): KB/s is 1000 bytes a second; the
// binary ones (KiB/s, MiB/s, GiB/s) are powers of 1024. Bits count as an
// eighth of a byte (1Gbit/s is 125MB/s). Units are case-sensitive, as they
// mean different things (Mb is not MB). The rate must come to a whole
// number of bytes a second, at least 1.

// byteRateUnits are the units a byte rate takes, in bytes a second.
var byteRateUnits = []struct {
	unit  string
	bytes *big.Rat
}{
	{"B/s", big.NewRat(1, 1)},
	{"KB/s", big.NewRat(1_000, 1)},
	{"MB/s", big.NewRat(1_000_000, 1)},
	{"GB/s", big.NewRat(1_000_000_000, 1)},
	{"KiB/s", big.NewRat(1<<10, 1)},
	{"MiB/s", big.NewRat(1<<20, 1)},
	{"GiB/s", big.NewRat(1<<30, 1)},
	{"Kbit/s", big.NewRat(1_000, 8)},
	{"Mbit/s", big.NewRat(1_000_000, 8)},
	{"Gbit/s", big.NewRat(1_000_000_000, 8)},
}

// ByteRateMax bounds a byte rate: a terabyte a second, past any link or
// disk the model is for.
const ByteRateMax = 1_000_000_000_000

// parseByteRate parses a byte rate; zero is "unlimited".
func parseByteRate(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "unlimited" {
		return 0, nil
	}
	for _, u := range byteRateUnits {
		num, ok := strings.CutSuffix(s, u.unit)
		if !ok || num == "" || strings.ContainsAny(num, " +-eE") {
			continue
		}
		if _, err := strconv.ParseFloat(num, 64); err != nil {
			continue // "125M" of "125MB/s" under "B/s": a longer unit may match
		}
		x, ok := new(big.Rat).SetString(num)
		if !ok {
			continue
		}
		x.Mul(x, u.bytes)
		if !x.IsInt() {
			return 0, fmt.Errorf("%q is not a whole number of bytes a second", s)
		}
		if x.Sign() <= 0 || x.Cmp(big.NewRat(ByteRateMax, 1)) > 0 {
			return 0, fmt.Errorf("%q is out of range: want 1B/s..1000GB/s, or unlimited", s)
		}
		return x.Num().Int64(), nil
	}
	return 0, fmt.Errorf("want a rate such as 125MB/s, 1Gbit/s or unlimited (units B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, Kbit/s, Mbit/s, Gbit/s), got %q", s)
}

// formatByteRate writes a rate as parseByteRate reads it, in the largest
// decimal unit that keeps it whole.
func formatByteRate(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	for _, u := range []struct {
		unit string
		div  int64
	}{{"GB/s", 1_000_000_000}, {"MB/s", 1_000_000}, {"KB/s", 1_000}} {
		if n%u.div == 0 {
			return strconv.FormatInt(n/u.div, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + "B/s"
}

// byteRate reads a byte rate field.
func (r *reader) byteRate(f field) (int64, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return 0, false
	}
	n, err := parseByteRate(s)
	if err != nil {
		r.fail(f.value, f.path, "%v", err)
		return 0, false
	}
	return n, true
}
