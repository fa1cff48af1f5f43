package reports

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// TransactionState is one transactional id as the coordinator leading its
// partition of __transaction_state held it when the run ended
// (final-state.json's transactions, `kafkasim describe transactions`).
type TransactionState struct {
	TransactionalID string `json:"transactional_id"`
	Coordinator     int32  `json:"coordinator"`
	ProducerID      int64  `json:"producer_id"`
	ProducerEpoch   int16  `json:"producer_epoch"`
	State           string `json:"state"`
	TimeoutMs       int64  `json:"transaction_timeout_ms"`
	// StartTimeMs: when the transaction open at the end began, in virtual
	// milliseconds of the run; -1 when none is open (Kafka's
	// CurrentTransactionStartTimeMs, wall-clock milliseconds there).
	StartTimeMs int64 `json:"current_transaction_start_time_ms"`
	// EndMs is when the run ended (virtual ms): the duration of a
	// transaction still open is EndMs - StartTimeMs.
	EndMs      int64            `json:"run_end_ms"`
	Partitions []TopicPartition `json:"topic_partitions"`
}

// DescribeTransactions prints kafka-transactions.sh describe's table
// (TransactionsCommand.DescribeTransactionsCommand) for every
// transactional id of fs, or those of ids: CoordinatorId,
// TransactionalId, ProducerId, ProducerEpoch, TransactionState,
// TransactionTimeoutMs, CurrentTransactionStartTimeMs,
// TransactionDurationMs, TopicPartitions. Times are the run's virtual
// milliseconds.
func DescribeTransactions(w io.Writer, fs FinalState, ids []string) error {
	headers := []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"}
	var rows [][]string
	for _, t := range fs.Transactions {
		if len(ids) > 0 && !slices.Contains(ids, t.TransactionalID) {
			continue
		}
		duration := int64(-1)
		if t.StartTimeMs >= 0 {
			duration = t.EndMs - t.StartTimeMs
		}
		rows = append(rows, []string{strconv.Itoa(int(t.Coordinator)), t.TransactionalID, strconv.FormatInt(t.ProducerID, 10),
			strconv.Itoa(int(t.ProducerEpoch)), t.State, strconv.FormatInt(t.TimeoutMs, 10), strconv.FormatInt(t.StartTimeMs, 10),
			strconv.FormatInt(duration, 10), strings.Join(tpNames(t.Partitions), ",")})
	}
	return prettyPrintTable(w, headers, rows)
}

// prettyPrintTable is Kafka's ToolsUtils.prettyPrintTable: each column as
// wide as its widest cell, left-aligned, a space between.
func prettyPrintTable(w io.Writer, headers []string, rows [][]string) error {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	bw := bufio.NewWriter(w)
	for _, r := range append([][]string{headers}, rows...) {
		var line strings.Builder
		for i, c := range r {
			fmt.Fprintf(&line, "%-*s ", widths[i], c)
		}
		fmt.Fprintln(bw, strings.TrimRight(line.String(), " "))
	}
	return bw.Flush()
}

// DescribeTransactionsJSON is what DescribeTransactions prints, as data.
func DescribeTransactionsJSON(fs FinalState, ids []string) []TransactionState {
	out := []TransactionState{}
	for _, t := range fs.Transactions {
		if len(ids) == 0 || slices.Contains(ids, t.TransactionalID) {
			if t.Partitions == nil {
				t.Partitions = []TopicPartition{}
			}
			out = append(out, t)
		}
	}
	return out
}

// LastStable is the partition's last stable offset: its high watermark
// when the run store did not record one.
func (p PartitionState) LastStable() int64 {
	if p.LSO != nil {
		return *p.LSO
	}
	return p.HW
}
