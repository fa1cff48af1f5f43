package producer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"kafkasim/history"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// workload is a producer instance's application: it sends records at a
// rate, with keys and payloads drawn as configured, and probes when asked,
// through its client, and records every send and its outcome in the
// history.
type workload struct {
	cfg    Config
	env    sim.Env
	client *Client
	rec    *history.Recorder
	// hist is the workload's handle on rec (when rec is set).
	hist history.Proc

	valuePrefix string
	values      valueBlock // the block values are cut from (nextValue)
	seq         int
	// keyNames holds "k<n>" of the first keyNamesMax keys back to back,
	// keyNameEnds where each ends: a key is drawn per record, and its name
	// is cut from one block of a few kilobytes, so that keys drawn at
	// random touch few cache lines.
	keyNames    string
	keyNameEnds []int32
	probes      map[string]history.Type // probe value -> outcome (Invoke: pending)
	// txn is the transactional workload's state (txnworkload.go).
	txn txnApp
}

// start opens the workload's history and schedules its first send.
func (w *workload) start(env sim.Env, client *Client) {
	w.env, w.client = env, client
	w.rec = w.cfg.Recorder
	if w.rec != nil {
		w.hist = w.rec.Proc(w.cfg.Name)
	}
	w.valuePrefix = w.cfg.Name
	if inc := env.Incarnation(); inc > 1 {
		// Values stay unique across restarts: the counter starts again.
		w.valuePrefix = fmt.Sprintf("%s/%d", w.cfg.Name, inc)
		if w.rec != nil {
			w.rec.Restarted(w.cfg.Name) // the world recorded the death (Recorder.Died)
		}
	}
	kind := timerSend
	if client.Transactional() {
		w.txnStartApp()
		kind = timerTxnWorkload
	}
	if w.cfg.Rate > 0 {
		start := max(w.cfg.Start-env.WorldTime(), 0)
		env.After(start+w.interval(), newTimer(kind, 0))
	}
}

// tick sends a record, unless the workload has stopped, and schedules the
// next send.
func (w *workload) tick() {
	now := w.env.WorldTime()
	if w.cfg.Stop > 0 && now >= w.cfg.Stop {
		return
	}
	w.send()
	w.env.After(w.interval(), newTimer(timerSend, 0))
}

func (w *workload) record(t history.Type, f string, v *history.Value) {
	if w.rec != nil {
		if t == history.Invoke {
			w.hist.Invoke(f, v)
		} else {
			w.hist.Complete(t, f, v)
		}
	}
}

// interval draws the time to the next send: exponential, mean 1/rate.
func (w *workload) interval() time.Duration {
	mean := float64(time.Second) / w.cfg.Rate
	return time.Duration(max(w.env.Rand().ExpFloat64()*mean, 1))
}

func (w *workload) send() {
	w.seq++
	value := w.nextValue(w.cfg.Payload)
	v := history.NoValue()
	v.Topic, v.Value = w.cfg.Topic, value
	rec := record.Record{Value: value, Timestamp: w.env.Now().Milliseconds()}
	if w.cfg.Keys > 0 {
		k := w.keyName(w.env.Rand().IntN(w.cfg.Keys))
		rec.Key, rec.HasKey = k, true
		v.Key, v.HasKey = k, true
	}
	if w.txn.on {
		w.txnSend(&v, true)
	}
	w.record(history.Invoke, history.FSend, &v)
	w.client.Send(rec, -1, w)
}

// countUp returns the decimal digits of one more than digits, a
// non-negative number's held in buf: in place, or, when every digit was a
// 9, rewritten from buf's start one digit longer.
func countUp(digits, buf []byte) []byte {
	for i := len(digits) - 1; i >= 0; i-- {
		if digits[i] != '9' {
			digits[i]++
			return digits
		}
		digits[i] = '0'
	}
	n := len(digits) + 1
	buf[0] = '1'
	for i := 1; i < n; i++ {
		buf[i] = '0'
	}
	return buf[:n]
}

// keyNamesMax bounds the key-name cache (a workload may draw from millions
// of keys; names above the bound are built each time).
const keyNamesMax = 1 << 12

func (w *workload) keyName(n int) string {
	if n >= keyNamesMax {
		return "k" + strconv.Itoa(n)
	}
	if w.keyNameEnds == nil {
		count := min(w.cfg.Keys, keyNamesMax)
		w.keyNameEnds = make([]int32, count)
		var block []byte
		for k := range count {
			block = strconv.AppendInt(append(block, 'k'), int64(k), 10)
			w.keyNameEnds[k] = int32(len(block))
		}
		w.keyNames = string(block)
	}
	start := int32(0)
	if n > 0 {
		start = w.keyNameEnds[n-1]
	}
	return w.keyNames[start:w.keyNameEnds[n]]
}

// valuesPerBlock is how many consecutive values nextValue builds at once.
const valuesPerBlock = 256

// valueBlock holds the values of sends base .. base+valuesPerBlock-1, end
// to end in one string: ends[i] is where value base+i ends.
type valueBlock struct {
	base int
	s    string
	ends [valuesPerBlock]int32
}

// nextValue is the value of send number w.seq, "<prefix>:<seq>", followed by
// " <payload>" when there is one. The workload's values are cut from a
// string of the next valuesPerBlock values, built at once: one allocation
// per block, not per send (a value lives as long as the history that
// records it, and so does its block).
func (w *workload) nextValue(payload string) string {
	if payload != w.cfg.Payload {
		v := w.valuePrefix + ":" + strconv.Itoa(w.seq)
		if payload != "" {
			v += " " + payload
		}
		return v
	}
	vb := &w.values
	i := w.seq - vb.base
	if vb.s == "" || i < 0 || i >= valuesPerBlock {
		var sb strings.Builder // its String does not copy
		sb.Grow(valuesPerBlock * (len(w.valuePrefix) + 9 + len(payload)))
		// The block's numbers are consecutive: the decimal digits of the
		// first are counted up in place, not formatted 256 times.
		var num [24]byte
		digits := strconv.AppendInt(num[1:1], int64(w.seq), 10)
		for k := range valuesPerBlock {
			sb.WriteString(w.valuePrefix)
			sb.WriteByte(':')
			sb.Write(digits)
			if payload != "" {
				sb.WriteByte(' ')
				sb.WriteString(payload)
			}
			vb.ends[k] = int32(sb.Len())
			digits = countUp(digits, num[:])
		}
		vb.base, vb.s, i = w.seq, sb.String(), 0
	}
	start := int32(0)
	if i > 0 {
		start = vb.ends[i-1]
	}
	return vb.s[start:vb.ends[i]]
}

// probe is Producer.Probe.
func (w *workload) probe() {
	n, _ := w.client.partitions()
	n = max(n, 1)
	if w.probes == nil {
		w.probes = map[string]history.Type{}
	}
	for i := range n {
		w.seq++
		value := w.nextValue("")
		v := history.NoValue()
		v.Topic, v.Value = w.cfg.Topic, value
		r := record.Record{Value: value, Timestamp: w.env.Now().Milliseconds()}
		if w.cfg.ProbeKeys {
			r.Key, r.HasKey = "kafkasim-probe-"+strconv.Itoa(i), true
			v.Key, v.HasKey = r.Key, true
		}
		if w.txn.on {
			w.txnSend(&v, true)
		}
		w.record(history.Invoke, history.FSend, &v)
		w.probes[value] = history.Invoke
		part := int32(i)
		if _, current := w.client.partitions(); !current {
			part = -1
		}
		w.client.Send(r, part, w)
	}
}

// OnCompletion records how a send ended (Callback), and a probe's outcome.
func (w *workload) OnCompletion(r *record.Record, m RecordMetadata, t history.Type, why string) {
	v := history.NoValue()
	v.Topic, v.Key, v.HasKey, v.Value = m.Topic, r.Key, r.HasKey, r.Value
	switch t {
	case history.OK:
		v.Partition, v.Offset = m.Partition, m.Offset
	case history.Fail:
		v.Error = why
	default:
		v.Partition = m.Partition // -1 if it never got one
		v.Error = why
	}
	if w.txn.on {
		w.txnSend(&v, false)
	}
	w.record(t, history.FSend, &v)
	if w.txn.on {
		w.txnSendAnswered()
	}
	if w.probes == nil {
		return // no probes: spare a lookup per record
	}
	if _, ok := w.probes[r.Value]; ok {
		w.probes[r.Value] = t
	}
}

// probeOutcome is Producer.ProbeOutcome.
func (w *workload) probeOutcome() (acked, failed, unknown, pending int) {
	for _, t := range w.probes { // kafkasim:orderless: counts
		switch t {
		case history.OK:
			acked++
		case history.Invoke:
			pending++
		case history.Info:
			unknown++
		default:
			failed++
		}
	}
	if w.txn.probeWanted {
		// The probe transaction waits for initTransactions, or for the
		// transaction under way to end: its probe is still to come.
		pending++
	}
	return acked, failed, unknown, pending
}

// probesUnknown is Producer.ProbesUnknown.
func (w *workload) probesUnknown() []string {
	var out []string
	for v, t := range w.probes { // kafkasim:orderless: sorted below
		if t == history.Info {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
