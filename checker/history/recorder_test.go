package history

import (
	"testing"
	"time"
)

func sendValue(v string) Value {
	x := NoValue()
	x.Topic, x.Key, x.HasKey, x.Value = "t", "k", true, v
	return x
}

// A client process that dies leaves no operation open: what it had open
// completes info (indeterminate) with the error, in invocation order, at the
// time of the death, and a crash pair follows; a restart is a pair too.
func TestDiedCompletesOpenOperationsAndRecordsTheCrash(t *testing.T) {
	now := time.Duration(0)
	r := NewRecorder(func() time.Duration { return now })
	r.Invoke("p-0", FSend, sendValue("p-0:0"))
	r.Invoke("p-0", FSend, sendValue("p-0:1"))
	r.Invoke("p-1", FSend, sendValue("p-1:0"))
	r.Invoke("p-0", FSend, sendValue("p-0:2"))
	now = time.Second
	done := sendValue("p-0:1")
	done.Partition, done.Offset = 0, 7
	r.Complete("p-0", OK, FSend, done)
	r.Invoke("c-0", FPoll, NoValue())
	if r.Open() != 4 {
		t.Fatalf("open %d, want 4", r.Open())
	}
	now = 2 * time.Second
	if n := r.Died("p-0", "process died: killed"); n != 2 {
		t.Fatalf("completed %d, want 2", n)
	}
	if n := r.Died("c-0", "process died: machine down"); n != 1 {
		t.Fatalf("completed %d, want 1", n)
	}
	now = 3 * time.Second
	r.Restarted("p-0")
	ops := r.Ops()
	tail := ops[6:]
	want := []struct {
		process string
		typ     Type
		f       string
		value   string
	}{
		{"p-0", Info, FSend, "p-0:0"}, {"p-0", Info, FSend, "p-0:2"},
		{"p-0", Invoke, FCrash, ""}, {"p-0", OK, FCrash, ""},
		{"c-0", Info, FPoll, ""}, {"c-0", Invoke, FCrash, ""}, {"c-0", OK, FCrash, ""},
		{"p-0", Invoke, FRestart, ""}, {"p-0", OK, FRestart, ""},
	}
	if len(tail) != len(want) {
		t.Fatalf("%d operations after the completion, want %d: %v", len(tail), len(want), tail)
	}
	for i, w := range want {
		o := tail[i]
		if o.Process != w.process || o.Type != w.typ || o.F != w.f || o.Value.Value != w.value {
			t.Fatalf("op %d: %v, want %s %s %s %q", i, o, w.process, w.typ, w.f, w.value)
		}
		at := int64(2 * time.Second)
		if o.F == FRestart {
			at = int64(3 * time.Second)
		}
		if o.Time != at {
			t.Fatalf("op %d at %d, want %d", i, o.Time, at)
		}
		if o.F != FRestart && o.Value.Error == "" {
			t.Fatalf("op %d has no error: %v", i, o)
		}
	}
	if tail[0].Value.Topic != "t" || tail[0].Value.Key != "k" || tail[0].Value.Partition != -1 || tail[0].Value.Offset != -1 {
		t.Fatalf("an info send keeps its invocation's value and no position: %+v", tail[0].Value)
	}
	if r.Open() != 1 { // p-1:0 is still open
		t.Fatalf("open %d, want 1", r.Open())
	}
	// Every operation of the dead processes is paired.
	open := map[string]int{}
	for _, o := range ops {
		if o.Process == "p-1" {
			continue
		}
		k := o.Process + " " + o.F + " " + o.Value.Value
		if o.Type == Invoke {
			open[k]++
		} else {
			open[k]--
		}
	}
	for k, n := range open {
		if n != 0 {
			t.Fatalf("%s: %d unpaired", k, n)
		}
	}
}
