package history

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

func randomOp(rng *rand.Rand, i int) Op {
	fs := []string{FSend, FPoll, FCommit, FFetchCommitted, FAssign, FRevoke, FTxnBegin, FTxnCommit, FTxnAbort, FCrash}
	op := Op{Index: int64(i), Time: int64(i) * 7, Process: "p-" + strconv.Itoa(rng.IntN(3)), Type: Type(rng.IntN(4)), F: fs[rng.IntN(len(fs))], Value: NoValue()}
	v := &op.Value
	if op.F == FSend || rng.IntN(4) == 0 {
		v.Topic, v.Value = "orders", "v:"+strconv.Itoa(i)+"é"
		if rng.IntN(2) == 0 {
			v.Key, v.HasKey = "k"+strconv.Itoa(rng.IntN(5)), true
		}
		if rng.IntN(2) == 0 {
			v.Partition, v.Offset = int32(rng.IntN(3)), int64(rng.IntN(100))
		}
	}
	if rng.IntN(3) == 0 {
		v.Isolation, v.Final = "read_committed", rng.IntN(2) == 0
		v.HasRecords = true
		for k := range rng.IntN(4) {
			r := Record{Topic: "orders", Partition: int32(k), Offset: int64(k), Value: "r" + strconv.Itoa(k)}
			if k%2 == 0 {
				r.Key, r.HasKey = "k", true
			}
			v.Records = append(v.Records, r)
		}
	}
	if rng.IntN(3) == 0 {
		x := v.X()
		x.Group, x.TransactionalID, x.MemberID = "g", "tx", "m-1"
		if rng.IntN(2) == 0 {
			x.Offsets = map[string]int64{"orders-0": 4, "orders-1": -1}
		}
		if rng.IntN(2) == 0 {
			x.LogStartOffsets = map[string]int64{"orders-0": 2}
		}
		if rng.IntN(2) == 0 {
			x.Positions = map[string]int64{"orders-0": 7, "orders-1": 0}
		}
		if rng.IntN(2) == 0 {
			x.EndOffsets = map[string]int64{"orders-0": 9}
		}
		if rng.IntN(2) == 0 {
			x.Generation = int32(rng.IntN(9))
		}
		if rng.IntN(2) == 0 {
			x.Partitions = []string{"orders-0"}
		}
		if rng.IntN(2) == 0 {
			x.Source = &Source{Topic: "in", Partition: 2, Offset: int64(rng.IntN(50))}
		}
		switch rng.IntN(4) {
		case 0:
			x.Producer = &ProducerEpoch{ID: 1000, Epoch: int32(rng.IntN(5))}
		case 1:
			x.Producer = &ProducerEpoch{ID: 1000, Epoch: -1}
		}
		if rng.IntN(2) == 0 {
			x.Sends = []Send{{Topic: "orders", Partition: -1, Value: "s", Offset: -1}, {Topic: "orders", Partition: 1, Key: "k", HasKey: true, Value: "t", Offset: 3}}
		}
	}
	if rng.IntN(5) == 0 {
		v.Error = "NOT_LEADER_OR_FOLLOWER"
	}
	return op
}

// The fast path decodes what the writer writes, exactly as encoding/json.
func TestFastPathAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := &interner{m: map[string]string{}}
	for i := range 5000 {
		op := randomOp(rng, i)
		line := AppendJSON(nil, &op)
		slow, err := parseLine(line, 1)
		if op.F == FSend && op.Value.Value == "" {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		fast, ok := parseFast(line, in)
		if !ok {
			t.Fatalf("the fast path declined a line the writer wrote: %s", line)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s\nfast %+v\nslow %+v", line, fast, slow)
		}
	}
	// Lines from elsewhere: the fast path either agrees or declines.
	lines := []string{
		`{"index":0,"time":1,"process":3,"type":"invoke","f":"send","value":{"topic":"t","value":17}}`,
		`{ "index" : 1 , "process" : "p" , "type" : "ok" , "f" : "poll" , "value" : { "records" : [ ] , "x" : {"y":[1,2,{"z":null}]} } , "extra" : true }`,
		`{"index":2,"process":"p","type":"ok","f":"poll","value":{"records":null}}`,
		`{"index":3,"process":"p","type":"ok","f":"send","value":{"topic":"t","value":"a\"b"}}`,
		`{"index":4,"process":"p","type":"ok","f":"send","value":{"topic":"t","value":"ab","key":null}}`,
		`{"index":5,"process":"p","type":"ok","f":"send","value":{"Topic":"t","value":"ab"}}`,
		`{"Index":6,"process":"p","type":"ok","f":"send","value":{"topic":"t","value":"ab"}}`,
		`{"index":7,"process":"p","type":"ok","f":"assign","value":{"member_epoch":4,"partitions":[]}}`,
		`{"index":8,"process":"p","type":"ok","f":"assign","value":{"member_epoch":4,"generation":2,"offsets":{}}}`,
		`{"index":9,"process":"p","type":"ok","f":"send","value":{"topic":"t","value":1.5e3,"offset":2}}`,
		`{"index":10,"process":"p","type":"ok","f":"send","value":{"topic":"t","value":""}}`,
		`{"index":11,"process":null,"type":"ok","f":"crash"}`,
		`{"index":1.0,"process":"p","type":"ok","f":"crash"}`,
		`{"index":12,"process":"p","type":"ok","f":"crash"} trailing`,
		`{"index":13,"process":"p","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":0,"offset":1,"value":"v","Key":"k"}]}}`,
		`{"index":14,"process":"p","type":"ok","f":"poll","value":{"final":null}}`,
		`{"index":15,"process":"p","type":"ok","f":"poll","value":{"partition":2147483648}}`,
		`{"index":16,"process":"p","type":"ok","f":"poll","value":{"isolation":"\u0072ead_committed"}}`,
		`{"index":17,"process":"p\u00e9","type":"ok","f":"poll","value":{}}`,
		`{"index":18,"process":"p","type":"ok","f":"send","value":{"topic":"t","value":"a"},"value":{"key":"k"}}`,
		`{"index":20,"process":"c","type":"ok","f":"side-effect","value":{"topic":"t","partition":0,"offset":3,"key":"t-0-3","applied":false}}`,
		`{"index":21,"process":"c","type":"ok","f":"side-effect","value":{"topic":"t","partition":0,"offset":3,"key":"t-0-3","applied":true,"group":"g"}}`,
		`{"index":22,"process":"c","type":"ok","f":"side-effect","value":{"applied":null}}`,
		`{"index":23,"process":"c","type":"ok","f":"side-effect","value":{"applied":1}}`,
		`{"index":24,"process":"e","type":"ok","f":"send","value":{"topic":"out","value":"e:1","source":{"topic":"in","partition":0}}}`,
		`{"index":25,"process":"e","type":"ok","f":"send","value":{"topic":"out","value":"e:1","source":{"topic":"in","partition":0,"offset":-1}}}`,
		`{"index":26,"process":"e","type":"ok","f":"send","value":{"topic":"out","value":"e:1","source":{"topic":"in","partition":0,"offset":4,"Key":1},"producer_epoch":3}}`,
		"{\"index\":19,\"process\":\"p\xff\",\"type\":\"ok\",\"f\":\"poll\",\"value\":{}}",
	}
	accepted := 0
	for _, l := range lines {
		slow, err := parseLine([]byte(l), 1)
		fast, ok := parseFast([]byte(l), in)
		if !ok {
			continue
		}
		accepted++
		if err != nil {
			t.Fatalf("%s: the fast path accepted what encoding/json rejects (%v)", l, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s\nfast %+v\nslow %+v", l, fast, slow)
		}
	}
	if accepted < 5 {
		t.Fatalf("the fast path accepted only %d of the lines", accepted)
	}
	// And the decoder gives the same history either way.
	var buf bytes.Buffer
	var ops []Op
	for i := range 200 {
		op := randomOp(rng, i)
		if op.F == FSend && op.Value.Value == "" {
			continue
		}
		if op.F == FSend && op.Type != Invoke {
			// A send completes what its process invoked.
			inv := op
			inv.Type, inv.Value.Partition, inv.Value.Offset = Invoke, -1, -1
			inv.Index = int64(len(ops))
			ops = append(ops, inv)
		}
		op.Index = int64(len(ops))
		ops = append(ops, op)
	}
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(&buf)
	if err != nil || len(got) != len(ops) {
		t.Fatalf("%d ops, %v", len(got), err)
	}
}
