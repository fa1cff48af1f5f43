package main

import (
	"runtime/debug"
	"runtime/metrics"
)

// Between a long run's simulation and its checks, the cluster's logs (most
// of the heap) become garbage, and the checks then build tables about as
// large. Left alone, the runtime returns the freed pages to the system
// slowly, and the checks' heap grows into fresh pages beside them: the
// process's peak RSS is then about the two phases' heaps added up (2.2 GB
// for an hour of the reference load, whose phases each peak near 1 GB).
// Collecting and returning the free pages once, when the simulation lets go
// of the cluster, makes the peak the larger phase's instead. A short run's
// heap is below retainedMinBytes: it skips the collection (a fuzz or sweep
// pool's runs never come here).
const retainedMinBytes = 256 << 20

// releaseSimulationMemory collects and returns free memory to the system
// when the heap holds more than retainedMinBytes.
func releaseSimulationMemory() {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	var held uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			held += v.Value.Uint64()
		}
	}
	if held >= retainedMinBytes {
		debug.FreeOSMemory()
	}
}
