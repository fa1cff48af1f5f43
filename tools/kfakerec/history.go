package main

// history.go: the JSON Lines history writer (kafkasim's docs/history.md) and the value
// shapes that the recorder writes into the "value" field of each line.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// Op is one history line. Field order matches kafkasim's docs/history.md.
type Op struct {
	Index   int64  `json:"index"`
	Time    int64  `json:"time"` // wall-clock ns since the start of recording
	Process string `json:"process"`
	Type    string `json:"type"` // invoke | ok | fail | info
	F       string `json:"f"`
	Value   any    `json:"value"`
}

// Recorder appends Ops to a file. Index and time are assigned under one lock,
// so index order is also time order, and every line is written whole.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	next  int64
	f     *os.File
	w     *bufio.Writer
	enc   *json.Encoder
	count map[string]int // f -> number of completed ops (ok/fail/info)
}

// NewRecorder creates (truncates) path and starts the history clock.
func NewRecorder(path string) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Recorder{start: time.Now(), f: f, w: w, enc: enc, count: map[string]int{}}, nil
}

// Write appends one line and returns its index.
func (r *Recorder) Write(process, typ, f string, value any) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := Op{Index: r.next, Time: time.Since(r.start).Nanoseconds(), Process: process, Type: typ, F: f, Value: value}
	r.next++
	if typ != "invoke" {
		r.count[f]++
	}
	if err := r.enc.Encode(op); err != nil {
		// A history that silently misses lines is worse than no history.
		fmt.Fprintln(os.Stderr, "kfakerec: writing history:", err)
		os.Exit(3)
	}
	return op.Index
}

// Invoke records the start of a client call.
func (r *Recorder) Invoke(process, f string, value any) { r.Write(process, "invoke", f, value) }

// Complete records the end of a client call: typ is ok, fail or info.
func (r *Recorder) Complete(process, typ, f string, value any) { r.Write(process, typ, f, value) }

// Lines is the number of lines written so far.
func (r *Recorder) Lines() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// Counts returns a copy of the completed-op counts by f.
func (r *Recorder) Counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.count))
	for k, v := range r.count {
		out[k] = v
	}
	return out
}

// Close flushes and closes the file.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.Flush(); err != nil {
		return err
	}
	return r.f.Close()
}

// ---- value shapes ----

// Rec is one record as a client saw it (poll results, sends inside a
// transaction).
type Rec struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Key       string `json:"key"`
	Value     string `json:"value"`
}

// SendValue is the value of a send op. Partition and offset are only known
// once the broker answered, so they are pointers and omitted on invoke.
type SendValue struct {
	Topic     string `json:"topic"`
	Partition *int32 `json:"partition,omitempty"`
	Key       string `json:"key"`
	Value     string `json:"value"`
	Offset    *int64 `json:"offset,omitempty"`
	TxnID     string `json:"transactional_id,omitempty"`
	Error     string `json:"error,omitempty"`
}

// PollValue is the value of a poll op. On invoke only the descriptive fields
// (mode, isolation, final) are set; on completion Records is always present
// (possibly empty).
type PollValue struct {
	Mode      string   `json:"mode,omitempty"`      // "assign" (manual partitions) or "group"
	Group     string   `json:"group,omitempty"`     // group name for group members
	Isolation string   `json:"isolation,omitempty"` // txn workload: read_committed | read_uncommitted
	Final     bool     `json:"final,omitempty"`     // part of the final read from offset 0 to the end
	Records   *[]Rec   `json:"records,omitempty"`
	Errors    []string `json:"errors,omitempty"`
}

// CommitValue is the value of commit and fetch-committed ops:
// offsets maps "topic-partition" to the next offset to consume.
type CommitValue struct {
	Group      string           `json:"group"`
	Offsets    map[string]int64 `json:"offsets"`
	Generation *int32           `json:"generation,omitempty"`
	MemberID   string           `json:"member_id,omitempty"`
	Error      string           `json:"error,omitempty"`
}

// AssignValue is the value of assign and revoke ops recorded from the
// OnPartitionsAssigned / OnPartitionsRevoked / OnPartitionsLost callbacks.
// For assign, Partitions is everything the member owns after the callback
// (Added is what this callback added; with the default cooperative balancer
// a callback only lists new partitions). For revoke, Partitions is what was
// taken away and Remaining what the member still owns.
type AssignValue struct {
	Group      string   `json:"group"`
	Partitions []string `json:"partitions"`
	Added      []string `json:"added,omitempty"`
	Remaining  []string `json:"remaining,omitempty"`
	Generation int32    `json:"generation"`
	MemberID   string   `json:"member_id,omitempty"`
	Lost       bool     `json:"lost,omitempty"` // OnPartitionsLost rather than a clean revoke
}

// TxnValue is the value of txn-begin.
type TxnValue struct {
	TxnID string `json:"transactional_id"`
	Txn   int    `json:"txn"` // sequence number of the transaction for this producer
	Error string `json:"error,omitempty"`
}

// TxnEndValue is the value of txn-commit and txn-abort: the sends made inside
// the transaction, in order (a send that was not acknowledged has no
// partition/offset).
type TxnEndValue struct {
	TxnID string      `json:"transactional_id"`
	Txn   int         `json:"txn"`
	Sends []SendValue `json:"sends"`
	Error string      `json:"error,omitempty"`
}

// tp formats a topic partition the way docs/history.md keys commit offsets.
func tp(topic string, partition int32) string { return fmt.Sprintf("%s-%d", topic, partition) }

// tpList flattens a kgo assignment map into sorted "topic-partition" strings.
func tpList(m map[string][]int32) []string {
	out := []string{}
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, tp(t, p))
		}
	}
	sort.Strings(out)
	return out
}

func ptr[T any](v T) *T { return &v }
