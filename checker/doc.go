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
//   - analyze.go: per-partition version orders; lost (with final reads) and
//     unseen writes, duplicates, inconsistent offsets, poll and send order,
//     skips within a reader's session, aborted and phantom reads, key order.
//   - txn.go: transactions: outcomes, lost writes of committed
//     transactions, aborted, uncommitted and precommitted reads.
//   - cycles.go: G0 and G1c over committed transactions (ww, wr and
//     realtime order), told apart into what Kafka's transactions permit and
//     what no execution can produce.
//   - groups.go: per-partition sessions of group members (assign, revoke),
//     committed offsets that go back, fetches of stale committed offsets.
//   - linear.go: the models of each partition's log (decided directly, in
//     O(n log n)) and each group's committed offsets (porcupine), with
//     porcupine's HTML visualisations of failures.
//   - verdicts.go: what each configuration promises, and the verdict table
//     (rendered in VERDICTS.md).
package checker
