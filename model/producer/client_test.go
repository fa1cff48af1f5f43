package producer_test

import (
	"strconv"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// completions is a Callback that keeps what it was told.
type completions struct {
	values []string
	meta   []producer.RecordMetadata
	types  []history.Type
}

func (c *completions) OnCompletion(r *record.Record, m producer.RecordMetadata, t history.Type, why string) {
	c.values = append(c.values, r.Value)
	c.meta = append(c.meta, m)
	c.types = append(c.types, t)
}

// A client's sends that share a batch with different callbacks (and none)
// are each told to their own callback, acknowledged at the offset of the
// very record sent.
func TestClientTellsEachSendItsOwnCallback(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	broker := &logBroker{}
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return broker }})
	cfg := producer.DefaultClientConfig("p-0", "orders")
	cfg.Brokers = []sim.NodeID{bid}
	c := producer.NewClient(cfg)
	w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: func() sim.Node { return c }})
	w.Start()
	w.RunUntil(100 * time.Millisecond)

	a, b := &completions{}, &completions{}
	want := map[*completions][]string{}
	for i, cb := range []*completions{a, a, b, a, nil, b} {
		v := "v" + strconv.Itoa(i)
		var callback producer.Callback
		if cb != nil {
			callback = cb
			want[cb] = append(want[cb], v)
		}
		c.Send(record.Record{Value: v}, 0, callback)
	}
	w.RunUntil(time.Second)

	if st := c.Stats; st.Sent != 6 || st.Acked != 6 || st.Batches != 1 {
		t.Fatalf("stats %+v: want 6 sent and acknowledged, in one batch", st)
	}
	for name, cb := range map[string]*completions{"a": a, "b": b} {
		if got := cb.values; len(got) != len(want[cb]) {
			t.Fatalf("callback %s was told of %v, want %v", name, got, want[cb])
		}
		for i, v := range cb.values {
			m := cb.meta[i]
			if v != want[cb][i] || cb.types[i] != history.OK || m.Topic != "orders" || m.Partition != 0 {
				t.Fatalf("callback %s, call %d: %q %s %+v, want %q ok in orders-0", name, i, v, cb.types[i], m, want[cb][i])
			}
			if m.Offset < 0 || m.Offset >= int64(len(broker.log)) || broker.log[m.Offset].Value != v {
				t.Fatalf("callback %s: %q acknowledged at offset %d of a log of %d", name, v, m.Offset, len(broker.log))
			}
		}
	}
}
