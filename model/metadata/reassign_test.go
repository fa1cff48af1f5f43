package metadata

import (
	"slices"
	"testing"
)

func ids(xs ...int32) []int32 { return xs }

// PartitionReassignmentReplicas: the assignment while it runs is the target
// then the removed replicas; adding and removing are sorted.
func TestNewReassignment(t *testing.T) {
	cases := []struct {
		name                       string
		current, target            []int32
		replicas, adding, removing []int32
	}{
		{"full move", ids(1, 2, 3), ids(6, 4, 5), ids(6, 4, 5, 1, 2, 3), ids(4, 5, 6), ids(1, 2, 3)},
		{"one replaced", ids(1, 2, 3), ids(3, 4, 1), ids(3, 4, 1, 2), ids(4), ids(2)},
		{"fewer replicas", ids(1, 2, 3), ids(2, 1), ids(2, 1, 3), nil, ids(3)},
		{"more replicas", ids(1, 2), ids(1, 2, 3), ids(1, 2, 3), ids(3), nil},
		{"reorder only", ids(1, 2, 3), ids(3, 2, 1), ids(3, 2, 1), nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReassignment(c.current, c.target)
			if !slices.Equal(r.Replicas, c.replicas) || !slices.Equal(r.Adding, c.adding) || !slices.Equal(r.Removing, c.removing) {
				t.Fatalf("got %+v", r)
			}
		})
	}
}

// The change builder's side of a reassignment, decision by decision: what
// the record starting it writes, when the ISR completes it, where the
// leader goes.
func TestReassignmentChanges(t *testing.T) {
	type want struct {
		leader                          int32
		leaderEpoch                     int32
		replicas, isr, adding, removing []int32
		noChange                        bool
	}
	cases := []struct {
		name  string
		p     *Partition
		setup func(b *ChangeBuilder)
		down  []int32
		want  want
	}{
		{
			name: "start a full move: union, adding, removing; leader and ISR stay",
			p:    part(ids(1, 2, 3), ids(1, 2, 3), nil, 1),
			setup: func(b *ChangeBuilder) {
				r := NewReassignment(b.p.Replicas, ids(4, 5, 6))
				b.TargetReplicas, b.TargetAdding, b.TargetRemoving = r.Replicas, r.Adding, r.Removing
			},
			want: want{leader: 1, leaderEpoch: 5, replicas: ids(4, 5, 6, 1, 2, 3), isr: ids(1, 2, 3), adding: ids(4, 5, 6), removing: ids(1, 2, 3)},
		},
		{
			name: "an ISR expansion short of the target does not complete",
			p:    reassigning(ids(4, 5, 6, 1, 2, 3), ids(1, 2, 3), ids(4, 5, 6), ids(1, 2, 3), 1),
			setup: func(b *ChangeBuilder) {
				b.TargetISR = ids(1, 2, 3, 4, 5)
			},
			want: want{leader: 1, leaderEpoch: 5, replicas: ids(4, 5, 6, 1, 2, 3), isr: ids(1, 2, 3, 4, 5), adding: ids(4, 5, 6), removing: ids(1, 2, 3)},
		},
		{
			name: "the last new replica joins: complete, removed leave the ISR, leader moves to the first target in the ISR",
			p:    reassigning(ids(4, 5, 6, 1, 2, 3), ids(1, 2, 3, 4, 5), ids(4, 5, 6), ids(1, 2, 3), 1),
			setup: func(b *ChangeBuilder) {
				b.TargetISR = ids(1, 2, 3, 4, 5, 6)
			},
			want: want{leader: 4, leaderEpoch: 6, replicas: ids(4, 5, 6), isr: ids(4, 5, 6), adding: ids(), removing: ids()},
		},
		{
			name: "complete while the first target is fenced: the next target leads",
			p:    reassigning(ids(4, 5, 6, 1, 2, 3), ids(1, 2, 3, 4, 5), ids(4, 5, 6), ids(1, 2, 3), 1),
			setup: func(b *ChangeBuilder) {
				b.TargetISR = ids(1, 2, 3, 4, 5, 6)
			},
			down: ids(4),
			want: want{leader: 5, leaderEpoch: 6, replicas: ids(4, 5, 6), isr: ids(4, 5, 6), adding: ids(), removing: ids()},
		},
		{
			name: "the leader stays when it is kept, but removing a replica bumps the leader epoch",
			p:    reassigning(ids(1, 4, 2, 3), ids(1, 2, 3), ids(4), ids(2, 3), 1),
			setup: func(b *ChangeBuilder) {
				b.TargetISR = ids(1, 2, 3, 4)
			},
			want: want{leader: 1, leaderEpoch: 6, replicas: ids(1, 4), isr: ids(1, 4), adding: ids(), removing: ids()},
		},
		{
			name: "fewer replicas completes at once",
			p:    part(ids(1, 2, 3), ids(1, 2, 3), nil, 3),
			setup: func(b *ChangeBuilder) {
				r := NewReassignment(b.p.Replicas, ids(2, 1))
				b.TargetReplicas, b.TargetAdding, b.TargetRemoving = r.Replicas, r.Adding, r.Removing
			},
			want: want{leader: 2, leaderEpoch: 6, replicas: ids(2, 1), isr: ids(1, 2), adding: ids(), removing: ids()},
		},
		{
			name: "more replicas: adding only, same leader epoch",
			p:    part(ids(1, 2), ids(1, 2), nil, 1),
			setup: func(b *ChangeBuilder) {
				r := NewReassignment(b.p.Replicas, ids(1, 2, 3))
				b.TargetReplicas, b.TargetAdding = r.Replicas, r.Adding
			},
			want: want{leader: 1, leaderEpoch: 5, replicas: ids(1, 2, 3), isr: ids(1, 2), adding: ids(3), removing: ids()},
		},
		{
			name: "a reorder writes the new order and nothing else",
			p:    part(ids(1, 2, 3), ids(1, 2, 3), nil, 1),
			setup: func(b *ChangeBuilder) {
				b.TargetReplicas = NewReassignment(b.p.Replicas, ids(3, 2, 1)).Replicas
			},
			want: want{leader: 1, leaderEpoch: 5, replicas: ids(3, 2, 1), isr: ids(1, 2, 3), adding: ids(), removing: ids()},
		},
		{
			name: "the same assignment writes nothing",
			p:    part(ids(1, 2, 3), ids(1, 2, 3), nil, 1),
			setup: func(b *ChangeBuilder) {
				r := NewReassignment(b.p.Replicas, ids(1, 2, 3))
				b.TargetReplicas = r.Replicas
			},
			want: want{noChange: true},
		},
		{
			name: "the old leader fails mid-move: elected from the ISR, the targets first",
			p:    reassigning(ids(4, 5, 6, 1, 2, 3), ids(1, 2, 3, 4), ids(4, 5, 6), ids(1, 2, 3), 1),
			setup: func(b *ChangeBuilder) {
				b.TargetISR = ids(2, 3, 4)
			},
			down: ids(1),
			want: want{leader: 4, leaderEpoch: 6, replicas: ids(4, 5, 6, 1, 2, 3), isr: ids(2, 3, 4), adding: ids(4, 5, 6), removing: ids(1, 2, 3)},
		},
		{
			name: "a completion that would empty the ISR waits",
			p:    reassigning(ids(4, 1), ids(1), ids(4), ids(1), 1),
			setup: func(b *ChangeBuilder) {
				b.TargetISR = ids(1)
				b.Election = ElectionPreferred
			},
			want: want{noChange: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewChangeBuilder(c.p, activeExcept(c.down...), true, ElectionOnline, 1)
			c.setup(b)
			rec, _ := b.Build()
			if c.want.noChange {
				if rec != nil {
					t.Fatalf("want no change, got %+v", rec)
				}
				return
			}
			if rec == nil {
				t.Fatal("no change")
			}
			q := apply(c.p, rec)
			w := c.want
			if q.Leader != w.leader || q.LeaderEpoch != w.leaderEpoch || !slices.Equal(q.Replicas, w.replicas) || !slices.Equal(q.ISR, w.isr) ||
				!slices.Equal(nonNil(q.AddingReplicas), nonNil(w.adding)) || !slices.Equal(nonNil(q.RemovingReplicas), nonNil(w.removing)) {
				t.Fatalf("got %s\nwant leader %d epoch %d replicas %v isr %v adding %v removing %v", q, w.leader, w.leaderEpoch, w.replicas, w.isr, w.adding, w.removing)
			}
		})
	}
}

func reassigning(replicas, isr, adding, removing []int32, leader int32) *Partition {
	p := part(replicas, isr, nil, leader)
	p.AddingReplicas, p.RemovingReplicas = adding, removing
	return p
}
