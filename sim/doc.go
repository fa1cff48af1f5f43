// Package sim is kafkasim's deterministic world: virtual time, an event
// scheduler, seeded randomness, a network, disks, process lifecycles, fault
// injection and the trace.
//
// sim knows nothing about Kafka. The nodes it runs (package model) are state
// machines driven through the Node interface; everything they may ask of the
// outside world goes through Env. Given the same seed and the same nodes, a
// World executes the same events in the same order and ends with the same
// trace hash, in any process and with any GOMAXPROCS.
//
// The rules that make that true, and that a test in this package enforces:
// one run is one goroutine (no goroutines, channels, select or locks); time is
// virtual (never the OS clock or OS timers); every random draw comes from a
// stream derived from the run seed by name (never the global generator); the
// event queue is ordered by (time, insertion sequence); map iteration order
// never reaches behaviour; and no file, network or environment access.
package sim
