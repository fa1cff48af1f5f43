package godview

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
)

// A list written and read back is the same list: every fact, in its order
// across kinds, each field as it was — the zero values a kind leaves, a
// producer id of 0 apart from NoProducer, offset 0 of a partition apart
// from no offset — and whether a god view recorded it.
func TestJSONLRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		l    List
	}{
		{"nothing happened", Seen()},
		{"zero", List{}},
		{"scheduled", Scheduled(Fact{Kind: PowerLoss, Producer: NoProducer}, Fact{Kind: PartitionsAdded, Topic: "orders", Producer: NoProducer})},
		{"every field", Seen(
			Fact{Kind: Loss, Partition: "orders-0", From: 0, To: 3070, Records: 3070, Producer: NoProducer,
				Cause: "power-loss", ExposedBy: "unclean-election", At: 42096000000, LeaderEnd: 12},
			Fact{Kind: PowerLoss, At: 40000000000, Producer: NoProducer},
			Fact{Kind: UncleanElection, Partition: "orders-0", At: 42096000000, Producer: NoProducer},
			Fact{Kind: ForgottenProducer, Partition: "orders-1", From: 7, To: 9, Producer: 0, At: 5},
			Fact{Kind: ForgottenBatch, Partition: "orders-1", From: 9, To: 10, Producer: 3},
			Fact{Kind: Loss, Partition: "orders-0", From: 4000, To: 4001, Records: 1, Producer: NoProducer, Cause: "disk-wipe"},
			Fact{Kind: StaleLeaderRead, Partition: "orders-4", From: 0, To: 1, Producer: NoProducer, Process: "c-0", At: 26028496718},
		)},
		{"offsets from 0, a topic with dashes", Seen(Fact{Kind: HeldBack, Partition: "a-b-12", From: 0, To: 2, Producer: NoProducer})},
		{"a topic name JSON escapes", Seen(Fact{Kind: PartitionsAdded, Topic: `a"b\c<&>`, Producer: NoProducer})},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteJSONL(&b, c.l); err != nil {
				t.Fatal(err)
			}
			got, err := ReadJSONL(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("reading back:\n%s: %v", b.String(), err)
			}
			if got.GodView() != c.l.GodView() || len(got.All()) != len(c.l.All()) {
				t.Fatalf("read back god view %v with %d facts, want %v with %d:\n%s", got.GodView(), len(got.All()), c.l.GodView(), len(c.l.All()), b.String())
			}
			for i := range c.l.All() {
				if got.All()[i] != c.l.All()[i] {
					t.Fatalf("fact %d read back as %+v, want %+v:\n%s", i, got.All()[i], c.l.All()[i], b.String())
				}
			}
			for _, k := range Kinds {
				if !reflect.DeepEqual(got.Of(k), c.l.Of(k)) {
					t.Fatalf("%s: read back %+v, want %+v", k, got.Of(k), c.l.Of(k))
				}
			}
		})
	}
}

// The file's lines are what docs/run-store.md shows: snake_case keys, the
// kind first, fields a kind leaves out left out.
func TestJSONLLines(t *testing.T) {
	var b bytes.Buffer
	WriteJSONL(&b, Seen(
		Fact{Kind: Loss, Partition: "orders-0", From: 0, To: 3070, Records: 3070, Producer: NoProducer, Cause: "power-loss", ExposedBy: "unclean-election", At: 42096000000},
		Fact{Kind: PowerLoss, At: 40000000000, Producer: NoProducer},
		Fact{Kind: ForgottenBatch, Partition: "orders-1", From: 9, To: 10, Producer: 3, At: 7},
	))
	want := `{"god_view":true,"facts":3}
{"kind":"loss","at_ns":42096000000,"partition":"orders-0","from":0,"to":3070,"records":3070,"cause":"power-loss","exposed_by":"unclean-election"}
{"kind":"power-loss","at_ns":40000000000}
{"kind":"forgotten-batch","at_ns":7,"partition":"orders-1","from":9,"to":10,"producer":3}
`
	if b.String() != want {
		t.Fatalf("got\n%swant\n%s", b.String(), want)
	}
}

// A file that is not a list of facts is an error naming the line and the
// key at fault.
func TestReadJSONLRejectsWhatIsNotAList(t *testing.T) {
	const head = `{"god_view":true,"facts":1}` + "\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"empty", "", "line 1: empty: the first line holds god_view and facts"},
		{"no god_view", `{"facts":0}`, "line 1: god_view: missing"},
		{"no facts count", `{"god_view":true}`, "line 1: facts: missing"},
		{"god_view not a bool", `{"god_view":"yes","facts":0}`, "line 1: god_view: want true or false, got string"},
		{"negative count", `{"god_view":true,"facts":-1}`, "line 1: facts: -1: a count, not below 0"},
		{"header not an object", `[1]`, "line 1: not the header: a line holds one JSON object"},
		{"header on a later line", "\n" + head, "line 2: the header holds god_view and facts, on the first line"},
		{"fewer facts", head, "line 1: facts: 1 announced, 0 found"},
		{"more facts", head + `{"kind":"power-loss","at_ns":1}` + "\n" + `{"kind":"power-loss","at_ns":2}`, "line 1: facts: 1 announced, 2 found"},
		{"no kind", head + `{"at_ns":1}`, "line 2: kind: missing"},
		{"unknown kind", head + `{"kind":"meteor"}`, `line 2: kind: "meteor" is not a kind of fact (loss, held-back,`},
		{"offset a string", head + `{"kind":"loss","partition":"t-0","from":"0","to":1}`, "line 2: from: want an integer, got string"},
		{"offset a fraction", head + `{"kind":"loss","partition":"t-0","from":0.5,"to":1}`, "line 2: from: want an integer, got number 0.5"},
		{"records a string", head + `{"kind":"loss","records":"3"}`, "line 2: records: want an integer, got string"},
		{"to below from", head + `{"kind":"loss","partition":"t-0","from":5,"to":4}`, "line 2: to: 4 is below from (5)"},
		{"negative from", head + `{"kind":"loss","partition":"t-0","from":-5,"to":2}`, "line 2: from: -5: an offset, not below 0"},
		{"negative time", head + `{"kind":"power-loss","at_ns":-1}`, "line 2: at_ns: -1: a time in the run, not below 0"},
		{"negative records", head + `{"kind":"loss","partition":"t-0","from":0,"to":2,"records":-3}`, "line 2: records: -3: a count, not below 0"},
		{"negative leader end", head + `{"kind":"loss","partition":"t-0","from":0,"to":2,"leader_end":-1}`, "line 2: leader_end: -1: an offset, not below 0"},
		{"negative producer", head + `{"kind":"forgotten-batch","partition":"t-0","from":0,"to":2,"producer":-1}`, "line 2: producer: -1: a producer id, not below 0"},
		{"partition without index", head + `{"kind":"loss","partition":"orders","from":0,"to":2}`, `line 2: partition: "orders": a partition is topic-N`},
		{"partition index not a number", head + `{"kind":"loss","partition":"orders-x","from":0,"to":2}`, `line 2: partition: "orders-x": a partition is topic-N`},
		{"loss of no partition", head + `{"kind":"loss","from":0,"to":2,"records":2}`, "line 2: partition: missing: loss names a partition"},
		{"partitions added to no topic", head + `{"kind":"partitions-added","at_ns":3}`, "line 2: topic: missing: partitions-added names the topic that grew"},
		{"a stale leader read by no reader", head + `{"kind":"stale-leader-read","partition":"orders-4","from":0,"to":1}`, "line 2: process: missing: stale-leader-read names the reader"},
		{"not JSON", head + `{"kind":`, "line 2: not a fact: unexpected end of JSON input"},
		{"not an object", head + `"loss"`, "line 2: not a fact: a line holds one JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadJSONL(strings.NewReader(c.body))
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// Keys it does not know are a newer writer's: ignored.
	if l, err := ReadJSONL(strings.NewReader(`{"god_view":false,"facts":1,"v":2}` + "\n" + `{"kind":"power-loss","at_ns":3,"node":"broker-1"}` + "\n")); err != nil || l.GodView() || l.Count(PowerLoss) != 1 {
		t.Fatalf("unknown keys: %v, %+v", err, l)
	}
}

// Kinds lists every Kind constant of the package: a kind missing from it
// would make the run store's file unreadable.
func TestKindsListsEveryKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "godview.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []Kind
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				continue
			}
			for _, val := range v.Values {
				lit := val.(*ast.BasicLit)
				declared = append(declared, Kind(strings.Trim(lit.Value, `"`)))
			}
		}
	}
	if len(declared) < 9 || !reflect.DeepEqual(declared, Kinds) {
		t.Fatalf("Kinds = %v, the constants are %v", Kinds, declared)
	}
}
