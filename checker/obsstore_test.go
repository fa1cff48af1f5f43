package checker

import (
	"math"
	"slices"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// The observation store answers every accessor as a plain slice of the
// same observations would, sorted by cmpObservation with exact duplicates
// dropped (the way build sorted them before runs): for reads that agree
// or disagree with the offset's first, repeat within a poll, leave gaps,
// go backwards, or lie far apart (in offsets or operations), and for
// acknowledgements among them (which reads leaves out).
func TestObsStoreIsTheSortedSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rec := &records{}
		st := &obsStore{rec: rec}
		var plain []observation
		base := rapid.SampledFrom([]int64{0, 7, 1 << 30, maxCanonOffset - 100}).Draw(t, "base")
		span := rapid.SampledFrom([]int64{20, 300, 5000, 1 << 45}).Draw(t, "span")
		truth := map[int64]int32{} // the value most reads see at an offset
		valueAt := func(off int64) int32 {
			if v, ok := truth[off]; ok {
				return v
			}
			v := int32(len(truth))
			truth[off] = v
			return v
		}
		var raw []observation // every record read, as often as read
		op := int64(0)
		polls := rapid.IntRange(0, 40).Draw(t, "polls")
		for range polls {
			// Now and then a gap in the indexes too wide for a run's.
			op += rapid.SampledFrom([]int64{1, 2, 3, 1 << 33}).Draw(t, "gap")
			sess := rapid.Int32Range(0, 4).Draw(t, "sess")
			off := base + rapid.Int64Range(-3, span).Draw(t, "from")
			run := int32(-1)
			for range rapid.IntRange(1, 150).Draw(t, "records") {
				switch rapid.IntRange(0, 9).Draw(t, "move") {
				case 0:
					// the same record again
				case 1:
					off -= rapid.Int64Range(1, 80).Draw(t, "back")
				case 2:
					off += rapid.Int64Range(2, 200).Draw(t, "skip")
				case 3:
					off = base + rapid.Int64Range(-3, span).Draw(t, "jump")
				default:
					off++
				}
				val := valueAt(off)
				if rapid.IntRange(0, 9).Draw(t, "disagree") == 0 {
					val = rapid.Int32Range(0, 1000).Draw(t, "other")
				}
				run = st.read(off, val, op, sess, run)
				ob := observation{off: off, op: op, val: val, sess: sess}
				plain = append(plain, ob)
				raw = append(raw, ob)
			}
		}
		acked := map[int32]bool{}
		for range rapid.IntRange(0, 60).Draw(t, "acks") {
			off := base + rapid.Int64Range(-3, span).Draw(t, "ackAt")
			val := valueAt(off)
			if rapid.Bool().Draw(t, "ackOther") {
				val = rapid.Int32Range(1000, 2000).Draw(t, "ackVal")
			}
			if acked[val] {
				continue // a value has one send at most: what does not fit a send is kept by value
			}
			acked[val] = true
			complete := rapid.Int64Range(0, op+1).Draw(t, "complete")
			s := rec.newSend(val, 0, 0, -1, rapid.Int64Range(-1<<40, complete).Draw(t, "invoke"))
			rec.setOffset(&s, off)
			rec.setComplete(&s, complete)
			rec.sends = append(rec.sends, s)
			st.ack(int32(len(rec.sends) - 1))
			plain = append(plain, observation{off: rec.offset(&s), op: complete, val: s.val, sess: -1})
		}

		// Every record read is there as often as it was read (keepLinRecs).
		var got []observation
		st.rawReads(func(off int64, val int32, op int64) {
			got = append(got, observation{off: off, val: val, op: op})
		})
		for i := range raw {
			raw[i].sess = 0
		}
		slices.SortFunc(raw, cmpObservation)
		slices.SortFunc(got, cmpObservation)
		if !slices.Equal(got, raw) {
			t.Fatalf("raw reads differ:\n%v\nwant\n%v", got, raw)
		}

		st.build()
		slices.SortFunc(plain, cmpObservation)
		plain = slices.Compact(plain)
		po := &partState{obs: *st}

		all := collect(po.all())
		if !slices.Equal(all, plain) {
			t.Fatalf("all:\n%v\nwant\n%v", all, plain)
		}
		// reads: the same without the acknowledgements.
		var wantReads []observation
		for _, ob := range plain {
			if ob.sess >= 0 {
				wantReads = append(wantReads, ob)
			}
		}
		if got := collect(po.reads()); !slices.Equal(got, wantReads) {
			t.Fatalf("reads:\n%v\nwant\n%v", got, wantReads)
		}
		// groups: each distinct offset once, with its observations.
		i := 0
		for k, obs := range po.groups() {
			j := i
			for j < len(plain) && plain[j].off == plain[i].off {
				j++
			}
			if len(obs) == 0 || !slices.Equal(obs, plain[i:j]) {
				t.Fatalf("group %d: %v, want %v", k, obs, plain[i:j])
			}
			i = j
		}
		if i != len(plain) {
			t.Fatalf("groups stopped at %d of %d", i, len(plain))
		}
		// after and obsAt, at known offsets, next to them, and far off.
		probes := []int64{math.MinInt64, -1, base - 1, base, math.MaxInt64 - 1}
		for range min(len(plain), 40) {
			off := plain[rapid.IntRange(0, len(plain)-1).Draw(t, "known")].off
			probes = append(probes, off-1, off, off+1)
		}
		for range 20 {
			probes = append(probes, base+rapid.Int64Range(-100, span+100).Draw(t, "probe"))
		}
		for _, x := range probes {
			var wantAfter, wantAt []observation
			for _, ob := range plain {
				if ob.off > x {
					wantAfter = append(wantAfter, ob)
				}
				if ob.off == x {
					wantAt = append(wantAt, ob)
				}
			}
			if got := collect(po.after(x)); !slices.Equal(got, wantAfter) {
				t.Fatalf("after(%d):\n%v\nwant\n%v", x, got, wantAfter)
			}
			if got := po.obsAt(x); !slices.Equal(got, wantAt) {
				t.Fatalf("obsAt(%d): %v, want %v", x, got, wantAt)
			}
		}
		// Stopping early stops.
		if len(plain) > 1 {
			n := 0
			for range po.all() {
				n++
				if n == len(plain)/2 {
					break
				}
			}
		}
	})
}

func collect(seq func(func(*observation) bool)) []observation {
	var out []observation
	for ob := range seq {
		out = append(out, *ob)
	}
	return out
}

// A poll reading a log in order takes one run per maxRunLen records, and
// reads that agree take no observation of their own.
func TestObsStoreKeepsAgreeingReadsAsRuns(t *testing.T) {
	st := &obsStore{rec: &records{}}
	for op := int64(1); op <= 3; op++ {
		run := int32(-1)
		for off := int64(0); off < 1000; off++ {
			run = st.read(off, int32(off), op, int32(op), run)
		}
	}
	st.read(500, 7, 4, 4, -1) // a disagreeing read is kept whole
	if want := 3 * ((1000 + maxRunLen - 1) / maxRunLen); len(st.runs) != want || len(st.extra) != 1 {
		t.Fatalf("%d runs and %d whole reads, want %d and 1", len(st.runs), len(st.extra), want)
	}
	st.build()
	po := &partState{obs: *st}
	at := po.obsAt(500)
	if len(at) != 4 || at[0].val != 7 || at[1].val != 500 || at[3].op != 3 {
		t.Fatalf("at 500: %v", at)
	}
	if n := len(collect(po.all())); n != 3001 {
		t.Fatalf("%d observations, want 3001", n)
	}
}

// The tables a long run holds millions of keep their sizes.
func TestPerRecordSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"readRun", unsafe.Sizeof(readRun{}), 16},
		{"sendRec", unsafe.Sizeof(sendRec{}), 36},
		{"linRead", unsafe.Sizeof(linRead{}), 20},
		{"observation", unsafe.Sizeof(observation{}), 24},
		{"logOp", unsafe.Sizeof(logOp{}), 64},
	} {
		if c.got != c.want {
			t.Errorf("%s is %d bytes, want %d", c.name, c.got, c.want)
		}
	}
}

// Every field of a send comes back as it was recorded, whether it fits the
// send's record or is kept aside (a foreign history's indexes need not be
// dense nor small, nor its offsets and times), and its completion is -1
// while it is pending.
func TestSendRoundTrips(t *testing.T) {
	edges := func(lo int64, at ...int64) *rapid.Generator[int64] {
		gens := []*rapid.Generator[int64]{rapid.Int64Range(lo, lo+10), rapid.Int64()}
		for _, x := range at {
			gens = append(gens, rapid.Int64Range(x-2, x+2))
		}
		return rapid.OneOf(gens...)
	}
	rapid.Check(t, func(t *rapid.T) {
		a := newAnalyzer(&Config{})
		topics := []string{"a", "b"}
		for _, name := range topics {
			a.topicID(name)
		}
		type want struct {
			invoke, complete, offset, doneAt int64
			txn, topic, part                 int32
			noAck                            bool
		}
		n := rapid.IntRange(1, 50).Draw(t, "sends")
		wants := make([]want, n)
		for i := range n {
			w := &wants[i]
			w.topic = rapid.Int32Range(0, 1).Draw(t, "topic")
			w.invoke = edges(-10, 1<<31, invFar).Draw(t, "invoke")
			s := a.newSend(int32(i), 0, a.topicID(topics[w.topic]), -1, w.invoke)
			w.complete = rapid.OneOf(rapid.Just(int64(-1)), rapid.Map(rapid.Int64Range(-3, 3), func(d int64) int64 { return w.invoke + d }), rapid.Int64()).Draw(t, "complete")
			a.setComplete(&s, w.complete)
			w.offset = rapid.OneOf(rapid.Just(int64(-1)), edges(-3, 1<<31, 1<<32)).Draw(t, "offset")
			a.setOffset(&s, w.offset)
			w.doneAt = edges(-3, 1<<32, atFar<<32, 1<<48).Draw(t, "doneAt")
			a.setDoneAt(&s, w.doneAt)
			w.txn = rapid.Int32Range(-1, 3).Draw(t, "txn")
			a.setTxn(&s, rapid.Int32Range(-1, 3).Draw(t, "txnBefore"))
			a.setTxn(&s, w.txn)
			w.part = -1
			if rapid.Bool().Draw(t, "placed") {
				// A completion may name a partition of another topic than
				// the invocation's (a foreign history).
				w.part = a.partID(topics[rapid.IntRange(0, 1).Draw(t, "partTopic")], rapid.Int32Range(0, 2).Draw(t, "partition"))
				a.setPart(&s, w.part)
			}
			if w.noAck = rapid.Bool().Draw(t, "noAck"); w.noAck {
				s.bits |= sendNoAck
			}
			a.sends = append(a.sends, s)
		}
		for i := range n {
			s, w := &a.sends[i], wants[i]
			got := want{a.invoke(s), a.complete(s), a.offset(s), a.doneAt(s), a.txn(s), a.sendTopic(s), s.part(), s.noAck()}
			if got != w {
				t.Fatalf("send %d: %+v, recorded %+v", i, got, w)
			}
		}
	})
}

// A partition's reads for linearizability give back their operations'
// indexes as recorded, however sparse or large (a foreign history's), where
// their records begin and end, and which read an operation's index names.
func TestLinReadsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var l linLog
		type want struct {
			call, ret int64
			from, to  int32
		}
		var wants []want
		ret := rapid.OneOf(rapid.Int64Range(-5, 5), rapid.Int64Range(linFar-5, linFar+5)).Draw(t, "first")
		for range rapid.IntRange(1, 40).Draw(t, "reads") {
			ret += rapid.OneOf(rapid.Int64Range(1, 3), rapid.Just(int64(math.MaxInt32)), rapid.Int64Range(1<<31, 1<<40)).Draw(t, "gap")
			call := ret - rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(math.MaxInt32-1, math.MaxInt32+1), rapid.Int64Range(0, 1<<50)).Draw(t, "span")
			w := want{call: call, ret: ret, from: l.n}
			l.n += rapid.Int32Range(1, 4).Draw(t, "records")
			w.to = l.n
			l.add(call, ret, 0, l.n, false)
			wants = append(wants, w)
		}
		for k, w := range wants {
			if got := (want{l.call(k), l.ret(k), l.from(k), l.reads[k].to}); got != w {
				t.Fatalf("read %d: %+v, recorded %+v", k, got, w)
			}
			if got := l.readAt(w.ret); got != k {
				t.Fatalf("readAt(%d) = %d, want %d", w.ret, got, k)
			}
			if got := l.readAt(w.ret - 1); k > 0 && w.ret-1 != wants[k-1].ret && got != -1 {
				t.Fatalf("readAt(%d) = %d, want none", w.ret-1, got)
			}
		}
	})
}
