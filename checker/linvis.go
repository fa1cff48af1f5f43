package checker

import (
	"bytes"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// checkVerbose is porcupine's verbose check with its partial linearizations
// in a canonical order, so that the visualisation (and the culprit a
// register's failure names) is the same bytes on every run of a seed.
//
// Porcupine gathers the partial linearizations through a set keyed by
// pointer and hands them out in that map's iteration order, random in every
// iteration; its visualisation then sorts them by length alone, with an
// unstable sort, and numbers them in that order (its "Largest" index of
// each operation points into it). Which partial linearizations exist is
// stable for an Illegal result: our models have one partition, and porcupine
// answers Illegal only when that partition's search ran to its end (a search
// cut short by the time limit is Unknown, and never visualised). Whether a
// failure is visualised at all, and for a log how wide a window, does
// depend on the wall-clock budget: a slower machine may show a narrower
// window or none, never a different order of the same one.
func checkVerbose(model porcupine.Model, ops []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	r, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	canonicalPartials(info.PartialLinearizations())
	return r, info
}

// canonicalPartials orders each partition's partial linearizations longest
// first, those of one length by their operation ids compared in sequence
// (ids are the operations' places in the history handed to porcupine, so
// the order is a total one over distinct linearizations). It sorts in
// place: porcupine v1.3.1's PartialLinearizations returns the slices its
// LinearizationInfo keeps, which Visualize then reads (the determinism test
// of the visualisation would fail if a later version copied them).
func canonicalPartials(parts [][][]int) {
	for _, ps := range parts {
		slices.SortFunc(ps, func(a, b []int) int {
			if len(a) != len(b) {
				return len(b) - len(a)
			}
			return slices.Compare(a, b)
		})
	}
}

// visualize is porcupine's HTML page for info, nil if it could not be made.
func visualize(model porcupine.Model, info porcupine.LinearizationInfo) []byte {
	var b bytes.Buffer
	if porcupine.Visualize(model, info, &b) != nil {
		return nil
	}
	return b.Bytes()
}
