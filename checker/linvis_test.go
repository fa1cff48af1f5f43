package checker

import (
	"bytes"
	"fmt"
	"testing"

	"kafkasim/history"
)

// Porcupine hands out the partial linearizations of a failed check in a
// map's order, random from one iteration to the next: checked again and
// again in one process, a failing history must give the same visualisation
// bytes and the same finding every time. Each history has partial
// linearizations of one length: the log's window two (Go orders a map of
// two differently in about one iteration in eight: a hundred checks expose
// it), the register six.
func TestLinearizabilityVisualisationIsTheSameOnEveryRun(t *testing.T) {
	off := func(n int64) map[string]int64 { return map[string]int64{"t-0": n} }
	// Six concurrent sends all acknowledged at offset 0.
	log := &hb{}
	for i := range 6 {
		v := history.NoValue()
		v.Topic, v.Value = "t", fmt.Sprint("v", i)
		log.add(fmt.Sprintf("p-%d", i), history.Invoke, history.FSend, v)
	}
	for i := range 6 {
		v := history.NoValue()
		v.Topic, v.Value, v.Partition, v.Offset = "t", fmt.Sprint("v", i), 0, 0
		log.add(fmt.Sprintf("p-%d", i), history.OK, history.FSend, v)
	}
	// Six concurrent commits, then six concurrent fetches each returning a
	// different one: any order explains one fetch, none all six.
	reg := &hb{}
	for i := range 6 {
		reg.invokeCommit(fmt.Sprintf("c-%d", i), "g", off(int64(10*(i+1))))
	}
	for i := range 6 {
		reg.completeCommit(fmt.Sprintf("c-%d", i), "g", off(int64(10*(i+1))), history.OK)
	}
	for _, outcome := range []history.Type{history.Invoke, history.OK} {
		for i := range 6 {
			v := history.NoValue()
			v.X().Group, v.X().Partitions = "g", []string{"t-0"}
			if outcome == history.OK {
				v.Ext.Offsets = off(int64(10 * (i + 1)))
			}
			reg.add(fmt.Sprintf("d-%d", i), outcome, history.FFetchCommitted, v)
		}
	}
	for _, c := range []struct {
		name string
		ops  []history.Op
	}{{"log", log.ops}, {"committed offsets", reg.ops}} {
		t.Run(c.name, func(t *testing.T) {
			var html []byte
			var summary string
			for i := range 100 {
				r := Check(c.ops, strict)
				expectCount(t, r, Nonlinearizable, 1)
				if len(r.Visualizations) != 1 {
					t.Fatalf("%d visualisations\n%s", len(r.Visualizations), r.Summary())
				}
				if i == 0 {
					html, summary = r.Visualizations[0].HTML, r.Summary()
					// Each partial linearization opens with its first step.
					if n := bytes.Count(html, []byte(`[{"Index":`)); n < 2 {
						t.Fatalf("the visualisation holds %d partial linearizations: nothing to order", n)
					}
					continue
				}
				if !bytes.Equal(r.Visualizations[0].HTML, html) {
					t.Fatalf("check %d: the visualisation differs from the first check's", i)
				}
				if s := r.Summary(); s != summary {
					t.Fatalf("check %d: the finding differs from the first check's:\n%s\nthen\n%s", i, summary, s)
				}
			}
		})
	}
}
