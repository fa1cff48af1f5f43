package checker

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

// genHistory generates a clean history of about n operations over a topic of
// `partitions` partitions: producers with up to five sends in flight each
// (some fail, some end unknown), assign-mode readers that poll every
// partition in turn, and final reads of everything at the end.
func genHistory(n, partitions int, seed uint64) []history.Op {
	rng := rand.New(rand.NewPCG(seed, 1))
	const producers, readers, inFlightMax, keysPerProducer = 16, 4, 5, 64
	type pending struct {
		value     string
		key       string
		partition int32
		fate      history.Type
	}
	ops := make([]history.Op, 0, n+n/8)
	add := func(process string, t history.Type, f string, v history.Value) {
		ops = append(ops, history.Op{Index: int64(len(ops)), Time: int64(len(ops)) * 1000, Process: process, Type: t, F: f, Value: v})
	}
	pnames := make([]string, producers)
	for i := range pnames {
		pnames[i] = "p-" + strconv.Itoa(i)
	}
	rnames := make([]string, readers)
	for i := range rnames {
		rnames[i] = "c-" + strconv.Itoa(i)
	}
	keys := make([][]string, producers)
	for i := range keys {
		for k := range keysPerProducer {
			keys[i] = append(keys[i], "k"+strconv.Itoa(i)+"-"+strconv.Itoa(k))
		}
	}
	inFlight := make([][]pending, producers)
	seq := make([]int, producers)
	// The log: each partition's acknowledged records (values and keys).
	logs := make([][]history.Record, partitions)
	pos := make([][]int, readers) // reader -> partition -> next offset
	for i := range pos {
		pos[i] = make([]int, partitions)
	}
	next := make([]int, readers) // reader -> next partition to poll
	for len(ops) < n-4*partitions {
		switch r := rng.IntN(100); {
		case r < 40: // a producer sends
			p := rng.IntN(producers)
			if len(inFlight[p]) >= inFlightMax {
				continue
			}
			key := keys[p][rng.IntN(keysPerProducer)]
			part := int32(hashKey(key) % uint32(partitions))
			v := history.NoValue()
			v.Topic, v.Key, v.HasKey, v.Value = "t", key, true, pnames[p]+":"+strconv.Itoa(seq[p])
			seq[p]++
			fate := history.OK
			switch f := rng.IntN(1000); {
			case f < 5:
				fate = history.Fail
			case f < 8:
				fate = history.Info
			}
			add(pnames[p], history.Invoke, history.FSend, v)
			inFlight[p] = append(inFlight[p], pending{value: v.Value, key: key, partition: part, fate: fate})
		case r < 80: // a producer's oldest send completes
			p := rng.IntN(producers)
			if len(inFlight[p]) == 0 {
				continue
			}
			s := inFlight[p][0]
			inFlight[p] = inFlight[p][1:]
			v := history.NoValue()
			v.Topic, v.Key, v.HasKey, v.Value = "t", s.key, true, s.value
			if s.fate == history.OK {
				v.Partition, v.Offset = s.partition, int64(len(logs[s.partition]))
				logs[s.partition] = append(logs[s.partition], history.Record{Topic: "t", Partition: s.partition, Offset: v.Offset, Key: s.key, HasKey: true, Value: s.value})
			}
			add(pnames[p], s.fate, history.FSend, v)
		default: // a reader polls its next partitions
			c := rng.IntN(readers)
			v := history.NoValue()
			add(rnames[c], history.Invoke, history.FPoll, v)
			v.HasRecords = true
			for range 2 {
				part := next[c]
				next[c] = (next[c] + 1) % partitions
				from := pos[c][part]
				to := min(from+1+rng.IntN(8), len(logs[part]))
				if to > from {
					v.Records = append(v.Records, logs[part][from:to]...)
					pos[c][part] = to
				}
			}
			add(rnames[c], history.OK, history.FPoll, v)
		}
	}
	// Every send still in flight ends unknown; then the final reads.
	for p := range inFlight {
		for _, s := range inFlight[p] {
			v := history.NoValue()
			v.Topic, v.Key, v.HasKey, v.Value = "t", s.key, true, s.value
			add(pnames[p], history.Info, history.FSend, v)
		}
	}
	for part := range logs {
		for from := 0; from == 0 || from < len(logs[part]); from += 5000 {
			v := history.NoValue()
			v.Final = true
			add("final-0", history.Invoke, history.FPoll, v)
			v.HasRecords = true
			v.Records = logs[part][from:min(from+5000, len(logs[part]))]
			if from == 0 {
				v.X().LogStartOffsets = map[string]int64{"t-" + strconv.Itoa(part): 0}
			}
			add("final-0", history.OK, history.FPoll, v)
		}
	}
	return ops
}

func hashKey(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

var benchConfig = Config{
	Producers: []ProducerGuarantees{{Prefix: "p", Acks: "all", Idempotence: true, MaxInFlight: 5, Retries: 100}},
	Topics:    []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2}},
	Happened:  godview.Seen(),
}

func TestGeneratedHistoryIsClean(t *testing.T) {
	ops := genHistory(60000, 4, 3)
	r := Check(ops, benchConfig)
	if len(r.Anomalies) != 0 || r.Violations != 0 {
		t.Fatalf("the benchmark's history must be clean:\n%s", r.Summary())
	}
	if r.Linearizability.Checked != 4 || r.Stats.Failed == 0 || r.Stats.Indeterminate == 0 || r.Stats.Polls < 10000 {
		t.Fatalf("%+v %+v", r.Stats, r.Linearizability)
	}
	// The streaming path gives the same report.
	var buf bytes.Buffer
	if err := history.Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	r2, err := CheckReader(&buf, benchConfig)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Stats != r.Stats || len(r2.Anomalies) != 0 {
		t.Fatalf("CheckReader: %+v, Check: %+v", r2.Stats, r.Stats)
	}
}

// BenchmarkCheckMillionOps checks a clean history of a million operations
// over 32 partitions.
func BenchmarkCheckMillionOps(b *testing.B) {
	ops := genHistory(1_000_000, 32, 1)
	runtime.GC()
	b.ResetTimer()
	var r *Report
	for range b.N {
		r = Check(ops, benchConfig)
	}
	b.StopTimer()
	if r.Violations != 0 || len(r.Anomalies) != 0 {
		b.Fatalf("not clean:\n%s", r.Summary())
	}
	b.ReportMetric(float64(len(ops)), "history-ops")
	b.ReportMetric(float64(r.Linearizability.Checked), "partitions-linearizable")
}

// BenchmarkCheckReaderMillionOps decodes and checks the same history from
// JSON Lines.
func BenchmarkCheckReaderMillionOps(b *testing.B) {
	ops := genHistory(1_000_000, 32, 1)
	var buf bytes.Buffer
	if err := history.Write(&buf, ops); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	ops = nil
	runtime.GC()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var r *Report
	for range b.N {
		var err error
		if r, err = CheckReader(bytes.NewReader(data), benchConfig); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if r.Violations != 0 || len(r.Anomalies) != 0 {
		b.Fatalf("not clean:\n%s", r.Summary())
	}
}
