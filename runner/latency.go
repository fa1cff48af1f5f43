package runner

import (
	"math"
	"sort"

	"kafkasim/history"
)

// P99ProduceLatencyMs is the 99th percentile of acknowledged sends'
// latency, from invocation to acknowledgement, in milliseconds (0 without
// a history or an acknowledged send): the sweep's p99-produce-latency-ms.
func (r *Result) P99ProduceLatencyMs() float64 {
	if r.History == nil {
		return 0
	}
	invoked := map[string]int64{}
	var lat []float64
	r.History.Each(func(op *history.Op) {
		if op.F != history.FSend {
			return
		}
		switch op.Type {
		case history.Invoke:
			invoked[op.Value.Value] = op.Time
		case history.OK:
			if t, ok := invoked[op.Value.Value]; ok {
				lat = append(lat, float64(op.Time-t)/1e6)
			}
		}
	})
	if len(lat) == 0 {
		return 0
	}
	sort.Float64s(lat)
	return lat[int(math.Ceil(0.99*float64(len(lat))))-1]
}
