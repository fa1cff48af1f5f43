package checker

import (
	"reflect"
	"testing"

	"kafkasim/history"
)

// exactSizes counts what Config.Sizes describes, from the operations.
func exactSizes(ops []history.Op) history.Sizes {
	s := history.Sizes{Acks: map[history.TopicPartition]int{}}
	for i := range ops {
		o := &ops[i]
		switch {
		case o.F == history.FSend && o.Type == history.Invoke:
			s.Sends++
		case o.F == history.FSend && o.Type == history.OK && o.Value.Offset >= 0 && o.Value.Partition >= 0:
			s.Acks[history.TopicPartition{Topic: o.Value.Topic, Partition: o.Value.Partition}]++
		}
	}
	return s
}

// Sizes only sizes tables: exact, too small or too large, the report is the
// one checking without it gives, on a clean history and on one with
// anomalies.
func TestSizesChangeNothingButCapacity(t *testing.T) {
	clean := genHistory(20000, 4, 5)
	broken := genHistory(20000, 4, 6)
	// Reads of values nobody sent, records read twice at other offsets,
	// and acknowledged sends whose records no reader returns.
	for i := range broken {
		o := &broken[i]
		if o.F == history.FPoll && o.Type == history.OK && len(o.Value.Records) > 1 && i%7 == 0 {
			o.Value.Records[0].Value = "nobody-sent-this"
			o.Value.Records[1].Offset += 3
			o.Value.Records = o.Value.Records[1:]
		}
	}
	for name, ops := range map[string][]history.Op{"clean": clean, "broken": broken} {
		want := Check(ops, benchConfig)
		if name == "broken" && len(want.Anomalies) == 0 {
			t.Fatalf("the broken history shows no anomaly: the test proves nothing")
		}
		exact := exactSizes(ops)
		small := history.Sizes{Sends: exact.Sends / 3, Acks: map[history.TopicPartition]int{}}
		large := history.Sizes{Sends: 3 * exact.Sends, Acks: map[history.TopicPartition]int{}}
		for tp, n := range exact.Acks {
			large.Acks[tp] = n + 100
		}
		for sname, sz := range map[string]history.Sizes{"exact": exact, "small": small, "large": large} {
			cfg := benchConfig
			cfg.Sizes = &sz
			got := Check(ops, cfg)
			if got.Summary() != want.Summary() || !reflect.DeepEqual(got.Anomalies, want.Anomalies) || got.Stats != want.Stats {
				t.Errorf("%s history, %s sizes: report differs:\n%s\nwant\n%s", name, sname, got.Summary(), want.Summary())
			}
		}
	}
}
