package checker

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestValIndexAgreesWithMap numbers values of every form — kafkasim's
// "<instance>:<seq>", near misses of it (leading zeros, signs, too many
// digits, no colon, an empty prefix or number) and sequence numbers far
// past a dense table's reach — as a plain map would.
func TestValIndexAgreesWithMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"p-0", "p-1", "", "a:b", "txn-3", "p/1-0", "a-longer-prefix", "a-longer-prefiy", "1234567", "12345678"}
	for i := range 12 {
		prefixes = append(prefixes, "q"+strconv.Itoa(i))
	}
	gen := func() string {
		p := prefixes[rng.IntN(len(prefixes))]
		switch rng.IntN(10) {
		case 0:
			return p + ":0" + strconv.Itoa(rng.IntN(50))
		case 1:
			return p + ":+" + strconv.Itoa(rng.IntN(50))
		case 2:
			return p + ":" + strconv.Itoa(rng.IntN(1<<40))
		case 3:
			return p + strconv.Itoa(rng.IntN(50))
		case 4:
			return p + ":"
		case 5:
			return p + ":" + strconv.Itoa(rng.IntN(100_000))
		default:
			return p + ":" + strconv.Itoa(rng.IntN(3000))
		}
	}
	x := newValIndex(0)
	want := map[string]int32{}
	for range 200_000 {
		v := gen()
		id, ok := x.get(v)
		wid, wok := want[v]
		if ok != wok || id != wid {
			t.Fatalf("get(%q) = %d, %v; want %d, %v", v, id, ok, wid, wok)
		}
		if !ok {
			id = int32(len(want))
			want[v] = id
			if rng.IntN(2) == 0 {
				x.put(v, id)
			} else if nid, added := x.number(v, id); nid != id || !added {
				t.Fatalf("number(%q, %d) = %d, %v", v, id, nid, added)
			}
		} else if nid, added := x.number(v, -5); nid != wid || added {
			t.Fatalf("number(%q) = %d, %v; want %d", v, nid, added, wid)
		}
	}
	for v, wid := range want { // kafkasim:orderless: each checked alone
		if id, ok := x.get(v); !ok || id != wid {
			t.Fatalf("get(%q) = %d, %v; want %d", v, id, ok, wid)
		}
		if n := x.name(wid); n != v {
			t.Fatalf("name(%d) = %q, want %q", wid, n, v)
		}
	}
}

func TestSplitValue(t *testing.T) {
	for _, c := range []struct {
		v, p string
		n    int
		ok   bool
	}{
		{"p-3:0", "p-3", 0, true}, {"p-3:120", "p-3", 120, true}, {":7", "", 7, true},
		{"a:b:9", "", 0, false}, {"1234567:3", "1234567", 3, true}, {"12345678:3", "12345678", 3, true}, {"p:007", "", 0, false}, {"p:", "", 0, false},
		{"p:-1", "", 0, false}, {"p:1x", "", 0, false}, {"p", "", 0, false},
		{"p:1234567890", "", 0, false}, {"p:999999999", "p", 999999999, true},
	} {
		p, _, n, ok := splitValue(c.v)
		if p != c.p || n != c.n || ok != c.ok {
			t.Errorf("splitValue(%q) = %q, %d, %v; want %q, %d, %v", c.v, p, n, ok, c.p, c.n, c.ok)
		}
	}
}

// valBenchValues are 120,000 values of 4 producers, as the reference load
// sends them, and an order of lookups: each value's send completion and two
// polls, the polls reading 12 partitions' shares in turn.
func valBenchValues() (vals, lookups []string) {
	rng := rand.New(rand.NewPCG(3, 4))
	var block []byte
	for i := range 120_000 {
		n := len(block)
		block = append(block, "p-"+strconv.Itoa(i%4)+":"+strconv.Itoa(i/4)...)
		vals = append(vals, string(block[n:])) // each its own string, as the history's
	}
	lookups = append(lookups, vals...)
	parts := make([][]string, 12)
	for _, v := range vals {
		p := rng.IntN(12)
		parts[p] = append(parts[p], v)
	}
	for range 2 {
		for _, p := range parts {
			lookups = append(lookups, p...)
		}
	}
	return vals, lookups
}

func BenchmarkValIndex(b *testing.B) {
	vals, lookups := valBenchValues()
	for range b.N {
		x := newValIndex(len(vals))
		for i, v := range vals {
			x.number(v, int32(i))
		}
		for _, v := range lookups {
			if _, ok := x.get(v); !ok {
				b.Fatal(v)
			}
		}
	}
}

// BenchmarkValMap is BenchmarkValIndex with the map the index replaced.
func BenchmarkValMap(b *testing.B) {
	vals, lookups := valBenchValues()
	for range b.N {
		x := make(map[string]int32, len(vals))
		for i, v := range vals {
			if _, ok := x[v]; !ok {
				x[v] = int32(i)
			}
		}
		for _, v := range lookups {
			if _, ok := x[v]; !ok {
				b.Fatal(v)
			}
		}
	}
}
