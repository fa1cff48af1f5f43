package checker

import (
	"cmp"
	"slices"
)

// cmpObservation is the version order of a partition's observations:
// offset, then value, then operation, then session.
func cmpObservation(x, y observation) int {
	if c := cmp.Compare(x.off, y.off); c != 0 {
		return c
	}
	if c := cmp.Compare(x.val, y.val); c != 0 {
		return c
	}
	if c := cmp.Compare(x.op, y.op); c != 0 {
		return c
	}
	return cmp.Compare(x.sess, y.sess)
}

// sortObservations sorts obs by cmpObservation. A partition's offsets are
// dense — a log's, each seen by a few readers and one acknowledgement — so
// it counts them into place by offset and orders the few sharing one,
// instead of comparison-sorting millions (a third of a check's time went to
// that). Observations that compare equal are equal in every field (one
// poll, one process), so the order is the one any sort gives. Sparse
// offsets (retention, compaction) fall back to sorting.
func sortObservations(obs []observation) {
	if len(obs) < 256 {
		slices.SortFunc(obs, cmpObservation)
		return
	}
	lo, hi := obs[0].off, obs[0].off
	for i := range obs {
		lo, hi = min(lo, obs[i].off), max(hi, obs[i].off)
	}
	if hi-lo >= int64(4*len(obs)) {
		slices.SortFunc(obs, cmpObservation)
		return
	}
	out := placeBy(make([]observation, len(obs)), obs, make([]int32, hi-lo+2),
		func(o *observation) int { return int(o.off - lo) })
	// Each offset's few observations, by value, operation, session.
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].off == out[i].off {
			j++
		}
		switch {
		case j-i > 12:
			slices.SortFunc(out[i:j], cmpObservation)
		case j-i > 1:
			// The sort SortFunc does of so few, without its calls.
			insertionSortObs(out[i:j])
		}
		i = j
	}
	copy(obs, out)
}

// lessObs is cmpObservation(*x, *y) < 0.
func lessObs(x, y *observation) bool {
	if x.off != y.off {
		return x.off < y.off
	}
	if x.val != y.val {
		return x.val < y.val
	}
	if x.op != y.op {
		return x.op < y.op
	}
	return x.sess < y.sess
}

// insertionSortObs sorts s by cmpObservation, as slices.SortFunc sorts
// slices of up to 12.
func insertionSortObs(s []observation) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && lessObs(&s[j], &s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// placeBy copies in into out (as long) in the order of key, 0 <= key(x) <
// len(counts)-1, keeping the order of those with equal keys: a counting
// sort, in linear time. counts is its scratch, cleared here; out is
// returned.
func placeBy[T any](out, in []T, counts []int32, key func(*T) int) []T {
	clear(counts)
	for i := range in {
		counts[key(&in[i])+1]++
	}
	for k := 1; k < len(counts); k++ {
		counts[k] += counts[k-1]
	}
	for i := range in {
		k := key(&in[i])
		out[counts[k]] = in[i]
		counts[k]++
	}
	return out
}
