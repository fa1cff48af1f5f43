package godview

import "testing"

func TestCovers(t *testing.T) {
	held := Fact{Kind: HeldBack, Partition: "t-0", From: 3, To: 5}
	l := Seen(held, Fact{Kind: Loss, Partition: "t-1", From: 0, To: 10, Cause: "power-loss", Producer: NoProducer})
	for _, c := range []struct {
		name      string
		kind      Kind
		partition string
		offset    int64
		want      bool
	}{
		{"From is inside", HeldBack, "t-0", 3, true},
		{"inside", HeldBack, "t-0", 4, true},
		{"To is outside", HeldBack, "t-0", 5, false},
		{"below From", HeldBack, "t-0", 2, false},
		{"wrong kind", ForgottenBatch, "t-0", 3, false},
		{"wrong partition", HeldBack, "t-1", 3, false},
		{"a partition whose name extends it", HeldBack, "t-01", 3, false},
		{"another kind's fact there", Loss, "t-1", 9, true},
		{"another kind's fact, its To", Loss, "t-1", 10, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := l.Covers(c.kind, c.partition, c.offset); got != c.want {
				t.Fatalf("Covers(%s, %s, %d) = %v, want %v", c.kind, c.partition, c.offset, got, c.want)
			}
		})
	}
	if !held.Covers("t-0", 3) || held.Covers("t-0", 5) {
		t.Fatal("a fact covers [From, To)")
	}
}

func TestOfAndCountKeepEachKindsOrder(t *testing.T) {
	l := Seen(
		Fact{Kind: Loss, Partition: "t-0", From: 5, To: 6, At: 1},
		Fact{Kind: PowerLoss, At: 2},
		Fact{Kind: Loss, Partition: "t-0", From: 1, To: 2, At: 3},
		Fact{Kind: PowerLoss, At: 4},
		Fact{Kind: PartitionsAdded, Topic: "t", At: 5},
	)
	for _, c := range []struct {
		kind Kind
		want []int64 // At of each, in order
	}{
		{Loss, []int64{1, 3}},
		{PowerLoss, []int64{2, 4}},
		{PartitionsAdded, []int64{5}},
		{UncleanElection, nil},
	} {
		got := l.Of(c.kind)
		if len(got) != len(c.want) || l.Count(c.kind) != len(c.want) {
			t.Fatalf("%s: %d facts (Count %d), want %d", c.kind, len(got), l.Count(c.kind), len(c.want))
		}
		for i := range got {
			if got[i].Kind != c.kind || got[i].At != c.want[i] {
				t.Fatalf("%s: fact %d is %+v, want At %d", c.kind, i, got[i], c.want[i])
			}
		}
	}
}

func TestFirstFindsTheEarliestMatch(t *testing.T) {
	l := Seen(
		Fact{Kind: Resurrected, Partition: "t-0", From: 0, To: 9},
		Fact{Kind: Loss, Partition: "t-0", From: 4, To: 6, Cause: "power-loss"},
		Fact{Kind: Loss, Partition: "t-0", From: 2, To: 6, Cause: "disk-wipe"},
	)
	from := func(off int64) func(*Fact) bool {
		return func(f *Fact) bool { return f.Partition == "t-0" && off >= f.From }
	}
	for _, c := range []struct {
		kind   Kind
		offset int64
		ok     bool
		cause  string
	}{
		{Loss, 5, true, "power-loss"}, // both reach it: the first decides
		{Loss, 3, true, "disk-wipe"},
		{Loss, 1, false, ""},
		{HeldBack, 5, false, ""}, // the resurrected range matches, but is of another kind
	} {
		f, ok := l.First(c.kind, from(c.offset))
		if ok != c.ok || f.Cause != c.cause {
			t.Fatalf("First(%s, from %d) = %+v, %v; want cause %q, %v", c.kind, c.offset, f, ok, c.cause, c.ok)
		}
	}
}

func TestGodView(t *testing.T) {
	for _, c := range []struct {
		name string
		l    List
		want bool
	}{
		{"seen, nothing happened", Seen(), true},
		{"seen", Seen(Fact{Kind: Loss}), true},
		{"scheduled", Scheduled(Fact{Kind: PowerLoss}), false},
		{"zero", List{}, false},
	} {
		if got := c.l.GodView(); got != c.want {
			t.Fatalf("%s: GodView() = %v, want %v", c.name, got, c.want)
		}
	}
	if n := Scheduled(Fact{Kind: PowerLoss}, Fact{Kind: PowerLoss}).Count(PowerLoss); n != 2 {
		t.Fatalf("a list without a god view still counts its facts: %d", n)
	}
}
