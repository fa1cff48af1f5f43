package checker

import (
	"strconv"
	"strings"
)

// valIndex numbers the values of a history. Values are looked up once per
// send invocation, completion and record polled (millions in a long run),
// and kafkasim's producers write them as "<producer instance>:<seq>", seq
// counting up from 0: such a value is found by its prefix (a handful per
// history) and, in that prefix's dense table, its sequence number, with no
// hashing of the whole string. Other values (a real client's history reads
// as anything), and a prefix's numbers too far past those it holds for a
// dense table to stay small, go to a map.
type valIndex struct {
	prefixes  []valPrefix
	prefixIDs map[string]int32 // prefixes past the first valScanned
	last      int32            // the prefix found last (-1: none)
	other     map[string]int32 // values not in a dense table
	// recent caches prefixes by key (a packed one's), in a slot its key
	// picks: producers' values interleave in a poll, so the last prefix
	// alone is often not the next one.
	recent [16]struct {
		key uint64
		id  int32
	}
	// refs says where each number's value is, so that the values need
	// not be kept as strings (millions in a long run): a dense one is its
	// prefix's index and sequence number (name rebuilds it), another one
	// the index in others, with refOther set. Only a finding names values,
	// so refs is built at the first name asked (from the dense tables and
	// others), and kept up from then on: a history without anomalies
	// never holds it (8 bytes a value).
	refs   []uint64
	named  bool  // refs is built
	n      int32 // values numbered: one past the highest number
	others []string
}

const refOther = 1 << 63

// valPrefix is one prefix's dense table: ids[seq] is the number of
// "<name>:<seq>" plus one, 0 when not numbered (or in other).
type valPrefix struct {
	name  string
	key   uint64 // splitValue's
	ids   []int32
	dense int  // values held in ids
	other bool // some value of this prefix is in other instead
}

// valScanned is how many prefixes a lookup scans before its map.
const valScanned = 8

// valDenseSlack bounds a dense table's length: a sequence number goes into
// it while below twice the values it holds plus this, so that the table
// stays within a few times its values whatever numbers a history holds.
const valDenseSlack = 1024

func newValIndex(hint int) valIndex {
	return valIndex{last: -1, other: make(map[string]int32, min(hint, 64))}
}

// splitValue splits a value of the form "<prefix>:<seq>", the prefix
// without a colon and seq a decimal number written as strconv.Itoa writes
// it (no sign, no leading zero, at most 9 digits): each such value has one
// (prefix, seq), and no two share one. key packs a prefix of up to 7 bytes,
// and its length, into a number that only it packs into (0 for a longer
// prefix): comparing prefixes is comparing keys.
func splitValue(v string) (prefix string, key uint64, seq int, ok bool) {
	i := strings.IndexByte(v, ':')
	d := len(v) - i - 1
	if i < 0 || d == 0 || d > 9 || (d > 1 && v[i+1] == '0') {
		return "", 0, 0, false
	}
	n := 0
	for _, c := range []byte(v[i+1:]) { // (no copy: the compiler ranges over v)
		c -= '0'
		if c > 9 {
			return "", 0, 0, false
		}
		n = n*10 + int(c)
	}
	prefix = v[:i]
	if len(prefix) <= 7 {
		key = uint64(len(prefix)+1) << 56
		for j, c := range []byte(prefix) {
			key |= uint64(c) << (8 * (j & 7))
		}
	}
	return prefix, key, n, true
}

// prefix returns the index of prefix p (packed into key, see splitValue),
// -1 when unknown (add: adding it).
func (x *valIndex) prefix(p string, key uint64, add bool) int32 {
	if key != 0 {
		f := key ^ key>>32 // the key's bytes folded: names that differ in a digit differ in the slot
		f ^= f >> 16
		f ^= f >> 8
		r := &x.recent[f&15]
		if r.key == key {
			return r.id
		}
		id := x.findPrefix(p, key, add)
		if id >= 0 {
			r.key, r.id = key, id
		}
		return id
	}
	return x.findPrefix(p, key, add)
}

func (x *valIndex) findPrefix(p string, key uint64, add bool) int32 {
	if x.last >= 0 && x.prefixes[x.last].key == key && (key != 0 || x.prefixes[x.last].name == p) {
		return x.last
	}
	n := min(len(x.prefixes), valScanned)
	for i := range n {
		if x.prefixes[i].key == key && (key != 0 || x.prefixes[i].name == p) {
			x.last = int32(i)
			return x.last
		}
	}
	if len(x.prefixes) > valScanned {
		if id, ok := x.prefixIDs[p]; ok {
			x.last = id
			return id
		}
	}
	if !add {
		return -1
	}
	id := int32(len(x.prefixes))
	x.prefixes = append(x.prefixes, valPrefix{name: p, key: key})
	if id >= valScanned {
		if x.prefixIDs == nil {
			x.prefixIDs = map[string]int32{}
		}
		x.prefixIDs[p] = id
	}
	x.last = id
	return id
}

// get returns v's number.
func (x *valIndex) get(v string) (int32, bool) {
	p, key, seq, ok := splitValue(v)
	if !ok {
		id, ok := x.other[v]
		return id, ok
	}
	pi := x.prefix(p, key, false)
	if pi < 0 {
		return 0, false // put adds the prefix of every value of this form
	}
	vp := &x.prefixes[pi]
	if seq < len(vp.ids) && vp.ids[seq] != 0 {
		return vp.ids[seq] - 1, true
	}
	if !vp.other {
		return 0, false
	}
	id, ok := x.other[v]
	return id, ok
}

// number returns v's number, numbering it next when it has none (added).
func (x *valIndex) number(v string, next int32) (id int32, added bool) {
	p, key, seq, ok := splitValue(v)
	if !ok {
		if id, ok := x.other[v]; ok {
			return id, false
		}
		x.putOther(v, next)
		return next, true
	}
	pi := x.prefix(p, key, true)
	vp := &x.prefixes[pi]
	if seq < len(vp.ids) && vp.ids[seq] != 0 {
		return vp.ids[seq] - 1, false
	}
	if vp.other {
		if id, ok := x.other[v]; ok {
			return id, false
		}
	}
	x.putSplit(v, pi, seq, next)
	return next, true
}

// put numbers v (not yet numbered) id.
func (x *valIndex) put(v string, id int32) {
	p, key, seq, ok := splitValue(v)
	if !ok {
		x.putOther(v, id)
		return
	}
	x.putSplit(v, x.prefix(p, key, true), seq, id)
}

// putOther numbers v id in the map.
func (x *valIndex) putOther(v string, id int32) {
	x.other[v] = id
	x.setRef(id, refOther|uint64(len(x.others)))
	x.others = append(x.others, v)
}

func (x *valIndex) setRef(id int32, ref uint64) {
	x.n = max(x.n, id+1)
	if !x.named {
		return
	}
	if int(id) >= len(x.refs) {
		x.refs = append(x.refs, make([]uint64, int(id)+1-len(x.refs))...)
	}
	x.refs[id] = ref
}

// name returns the value numbered id.
func (x *valIndex) name(id int32) string {
	if !x.named {
		x.buildRefs()
	}
	r := x.refs[id]
	if r&refOther != 0 {
		return x.others[r&^refOther]
	}
	return x.prefixes[r>>32].name + ":" + strconv.Itoa(int(uint32(r)))
}

// buildRefs builds refs from where the values are numbered.
func (x *valIndex) buildRefs() {
	x.refs = make([]uint64, x.n)
	for pi := range x.prefixes {
		for seq, id := range x.prefixes[pi].ids {
			if id != 0 {
				x.refs[id-1] = uint64(pi)<<32 | uint64(seq)
			}
		}
	}
	for i, v := range x.others {
		x.refs[x.other[v]] = refOther | uint64(i)
	}
	x.named = true
}

// putSplit numbers v, of prefix pi and number seq, id.
func (x *valIndex) putSplit(v string, pi int32, seq int, id int32) {
	vp := &x.prefixes[pi]
	if seq >= len(vp.ids) {
		if seq >= 2*vp.dense+valDenseSlack {
			vp.other = true
			x.putOther(v, id)
			return
		}
		n := max(seq+1, 2*len(vp.ids), 64)
		ids := make([]int32, n)
		copy(ids, vp.ids)
		vp.ids = ids
	}
	vp.ids[seq] = id + 1
	vp.dense++
	x.setRef(id, uint64(pi)<<32|uint64(seq))
}
