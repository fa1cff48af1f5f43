package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// Inputs that once took the loader seconds or memory without bound (YAML
// aliases repeating a part thousands of times, counts multiplying one
// another, long values quoted in messages). Each is now an error found
// within bounds the file's own size sets: what the reader walks, the nodes
// and faults it builds, the length of its messages. Wall time is left to
// the fuzzer; these pin the work.
func TestWorkIsBoundedByTheFile(t *testing.T) {
	list := func(item string, n int) string { return strings.TrimSuffix(strings.Repeat(item+", ", n), ", ") }
	topics := func(n int, body string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, ", {name: t%d%s}", i, body)
		}
		return b.String()[2:]
	}
	cases := []struct {
		name, src string
		key, msg  string
	}{
		// 20,000 aliases of a producer of 256 instances built 5 million
		// nodes (and a network of their pairs) before the run, out of memory.
		{"producer instances", "topics: [{name: t}]\nproducers: [&p {count: 200}, " + list("*p", 2) + "]\n",
			"producers[1].count", "make 400, more than the 256"},
		{"consumer instances", "topics: [{name: t}]\nconsumers: [&c {count: 200}, " + list("*c", 2) + "]\n",
			"consumers[1].count", "make 400, more than the 256"},
		{"client entries", "topics: [{name: t}]\nproducers: [" + list("{count: 0}", 300) + "]\n",
			"producers", "300 producer entries is more than the 256"},
		// One fault entry with a list of targets is a fault per target.
		{"faults from target lists", "faults: [&f {at: 1s, crash: [" + list("broker-1", 2000) + "]}, " + list("*f", 5) + "]\n",
			"faults[5].crash", "make 12000 faults in all, more than 10000"},
		// Aliases nested three deep: 3 million replica ids from 40 KB.
		{"nested aliases", "cluster: {brokers: 3}\ntopics: [{name: t, replica-assignment: &a [&r [1, 2, 3], " + list("*r", 999) + "]}, " +
			topics(900, ", replica-assignment: *a") + "]\n", "", "YAML aliases (*name) repeat more here than the file could hold"},
		{"aliased payload", "topics: [{name: t}]\nproducers: [{name: a, payload: &x " + strings.Repeat("x", 20_000) + "}, " +
			topics(10, ", payload: *x") + "]\n", "", "YAML aliases (*name) repeat more here"},
		{"topics", "topics: [" + topics(1001, "") + "]\n", "topics", "1001 topics is more than 1000"},
		// The file fits, the scenario written out with its defaults (the run
		// store's scenario.yaml, which replay reads) would not.
		{"written out", "topics: [{name: t}]\nproducers: [{payload: " + strings.Repeat("x", FileBytesMax-100) + "}]\n", "",
			"written out with every default filled in"},
		// Long values: a suggestion compared a megabyte key with every known
		// one, and messages quoted the whole value.
		{"long key", "? " + strings.Repeat("k", 200_000) + "x\n: 1\n", strings.Repeat("k", 200_000) + "x", "unknown key"},
		{"long bug", "bugs: [" + strings.Repeat("h", 200_000) + "]\n", "bugs[0]", "unknown bug"},
		{"long number", "cluster: {brokers: " + strings.Repeat("9", 200_000) + "}\n", "cluster.brokers", "want an integer"},
		{"long acks", "topics: [{name: t}]\nproducers: [{config: {acks: " + strings.Repeat("a", 200_000) + "}}]\n", "producers[0].config.acks", "want one of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.src)
			s, r, err := parse("big.yaml", data)
			if err == nil {
				t.Fatal("accepted")
			}
			es := err.(Errors)
			found := false
			for _, e := range es {
				found = found || e.Key == cutLong(c.key) && strings.Contains(e.Msg, c.msg)
				if line := e.Error(); len(line) > messageMax+200 || strings.Count(line, "hhh") > 100 || strings.Count(line, "999") > 100 ||
					strings.Count(line, "kkk") > 100 || strings.Count(line, "aaa") > 100 {
					t.Errorf("an error of %d bytes: %.200s", len(line), line)
				}
			}
			if !found {
				t.Fatalf("want an error at %q saying %q; got\n%.2000v", c.key, c.msg, err)
			}
			if r.values > valuesFloor+len(data) || r.text > textFloor+2*len(data) {
				t.Errorf("walked %d values and %d bytes of text, for a file of %d bytes", r.values, r.text, len(data))
			}
			producers, consumers := 0, 0
			for _, p := range s.Producers {
				producers += p.Count
			}
			for _, c := range s.Consumers {
				consumers += c.Count
			}
			if producers > InstancesMax || consumers > InstancesMax || len(s.Topics) > TopicsMax || len(s.Faults) > FaultsMax {
				t.Errorf("built %d producer and %d consumer instances, %d topics, %d faults", producers, consumers, len(s.Topics), len(s.Faults))
			}
		})
	}
}

// Aliases used as intended, one part shared by a few others, are fine.
func TestAliasesWithinReason(t *testing.T) {
	src := `name: shared
topics: [{name: a}, {name: b}]
producers:
  - { name: p1, topic: a, config: &cfg { acks: all, linger.ms: 20, batch.size: 32768 } }
  - { name: p2, topic: b, config: *cfg }
  - { name: p3, topic: b, config: *cfg }
`
	s, err := Parse("shared.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Producers[2].Config.Get("linger.ms"); got != "20" {
		t.Fatalf("p3 linger.ms %s, want the shared 20", got)
	}
}
