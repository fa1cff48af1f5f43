// Package model is the system under test: the KRaft controller quorum, brokers
// (partition replicas, group and transaction coordinators) and the producer and
// consumer clients, each a deterministic state machine driven by the world of
// package sim through sim.Env. It knows nothing about YAML, files or plots.
package model
