// Package checker reads client histories (SPEC.md §3), finds the anomalies a
// Kafka user cares about, checks linearizability with porcupine, and decides
// for each anomaly whether the configuration permits it or a guarantee broke.
package checker
