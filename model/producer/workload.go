package producer

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"kafkasim/history"
	"kafkasim/model/record"
)

// The workload: what the application sends, and when.

// interval draws the time to the next send: exponential, mean 1/rate.
func (p *Producer) interval() time.Duration {
	mean := float64(time.Second) / p.cfg.Rate
	return time.Duration(max(p.env.Rand().ExpFloat64()*mean, 1))
}

func (p *Producer) send() {
	p.seq++
	value := p.nextValue(p.cfg.Payload)
	v := history.NoValue()
	v.Topic, v.Value = p.cfg.Topic, value
	rec := record.Record{Value: value, Timestamp: p.env.Now().Milliseconds()}
	if p.cfg.Keys > 0 {
		k := p.keyName(p.env.Rand().IntN(p.cfg.Keys))
		rec.Key, rec.HasKey = k, true
		v.Key, v.HasKey = k, true
	}
	p.record(history.Invoke, history.FSend, &v)
	p.Stats.Sent++
	// Before any metadata arrives the record waits unpartitioned (Kafka
	// blocks send() for up to max.block.ms), its delivery timeout running.
	pr := pendingRecord{record: rec, partition: -1}
	p.append(pr)
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

func (p *Producer) keyName(n int) string {
	if n >= keyNamesMax {
		return "k" + strconv.Itoa(n)
	}
	if p.keyNameEnds == nil {
		count := min(p.cfg.Keys, keyNamesMax)
		p.keyNameEnds = make([]int32, count)
		var block []byte
		for k := range count {
			block = strconv.AppendInt(append(block, 'k'), int64(k), 10)
			p.keyNameEnds[k] = int32(len(block))
		}
		p.keyNames = string(block)
	}
	start := int32(0)
	if n > 0 {
		start = p.keyNameEnds[n-1]
	}
	return p.keyNames[start:p.keyNameEnds[n]]
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

// nextValue is the value of send number p.seq, "<prefix>:<seq>", followed by
// " <payload>" when there is one. The workload's values are cut from a
// string of the next valuesPerBlock values, built at once: one allocation
// per block, not per send (a value lives as long as the history that
// records it, and so does its block).
func (p *Producer) nextValue(payload string) string {
	if payload != p.cfg.Payload {
		v := p.valuePrefix + ":" + strconv.Itoa(p.seq)
		if payload != "" {
			v += " " + payload
		}
		return v
	}
	vb := &p.values
	i := p.seq - vb.base
	if vb.s == "" || i < 0 || i >= valuesPerBlock {
		var sb strings.Builder // its String does not copy
		sb.Grow(valuesPerBlock * (len(p.valuePrefix) + 9 + len(payload)))
		// The block's numbers are consecutive: the decimal digits of the
		// first are counted up in place, not formatted 256 times.
		var num [24]byte
		digits := strconv.AppendInt(num[1:1], int64(p.seq), 10)
		for k := range valuesPerBlock {
			sb.WriteString(p.valuePrefix)
			sb.WriteByte(':')
			sb.Write(digits)
			if payload != "" {
				sb.WriteByte(' ')
				sb.WriteString(payload)
			}
			vb.ends[k] = int32(sb.Len())
			digits = countUp(digits, num[:])
		}
		vb.base, vb.s, i = p.seq, sb.String(), 0
	}
	start := int32(0)
	if i > 0 {
		start = vb.ends[i-1]
	}
	return vb.s[start:vb.ends[i]]
}

// Probe sends one record without a key (with one, to a compacted topic) to
// every partition, now, whether or
// not the workload has stopped: after the heal, the proof that the producer
// can write again. ProbeOutcome tells how the probes ended.
func (p *Producer) Probe() {
	n := max(len(p.parts), 1)
	if p.probes == nil {
		p.probes = map[string]history.Type{}
	}
	for i := range n {
		p.seq++
		value := p.nextValue("")
		v := history.NoValue()
		v.Topic, v.Value = p.cfg.Topic, value
		r := record.Record{Value: value, Timestamp: p.env.Now().Milliseconds()}
		if p.cfg.ProbeKeys {
			r.Key, r.HasKey = "kafkasim-probe-"+strconv.Itoa(i), true
			v.Key, v.HasKey = r.Key, true
		}
		p.record(history.Invoke, history.FSend, &v)
		p.Stats.Sent++
		p.probes[value] = history.Invoke
		part := int32(i)
		if !p.metaValid {
			part = -1
		}
		p.append(pendingRecord{record: r, partition: part})
	}
}

// ProbeOutcome counts the probes acknowledged, failed, unknown (info:
// with acks=0 every send is), and still pending.
func (p *Producer) ProbeOutcome() (acked, failed, unknown, pending int) {
	for _, t := range p.probes { // kafkasim:orderless: counts
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
	return acked, failed, unknown, pending
}

// ProbesUnknown lists the values of probes whose outcome is unknown, sorted.
func (p *Producer) ProbesUnknown() []string {
	var out []string
	for v, t := range p.probes { // kafkasim:orderless: sorted below
		if t == history.Info {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
