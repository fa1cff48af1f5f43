// Package checker reads client histories (docs/history.md), finds the anomalies a
// Kafka user cares about, checks linearizability (each partition's log by a
// direct check held to porcupine's search, committed offsets with porcupine),
// and decides
// for each anomaly whether the configuration permits it or a guarantee broke.
//
// Check takes a history in memory; CheckReader decodes one from JSON Lines
// and analyses it as it goes. Both keep only compact facts about the history
// (a record per send, per record read, per transaction and per offset
// commit), so a million-operation history checks in a few seconds.
//
// The analysis, by file:
//   - analyze.go: the analyzer and the order of its work; ingest.go takes
//     the history in, an operation at a time, into the index (index.go:
//     numbered processes, partitions and values; per-partition version
//     orders).
//   - a file per check: lost.go, lost (with final reads) and unseen writes;
//     offsets.go, duplicates, inconsistent offsets, aborted and phantom
//     reads; sendorder.go and keyorder.go, send and key order; pollskip.go
//     and coverage.go, poll order and skips within a reader's session
//     (compaction.go: what the log cleaner may have removed).
//   - lookups.go: what the verdicts ask of the analysis about a finding's
//     position.
//   - txn.go: transactions: outcomes, lost writes of committed
//     transactions, aborted, uncommitted and precommitted reads.
//   - cycles.go: G0 and G1c over committed transactions (ww, wr and
//     realtime order), told apart into what Kafka's transactions permit and
//     what no execution can produce.
//   - groups.go: per-partition sessions of group members (assign, revoke),
//     committed offsets that go back, fetches of stale committed offsets.
//   - linear.go: linearizability of each partition's log (decided directly,
//     in O(n log n): linscan.go) and each group's committed offsets
//     (porcupine), on the models of linmodel.go; linjobs.go runs the checks
//     within the time budget, linexplain.go reports failures with
//     porcupine's HTML visualisations.
//   - verdicts.go: what each configuration promises, and the verdict table
//     (rendered in VERDICTS.md).
package checker
