package runner

import (
	"fmt"
	"kafkasim/checker"
	"strings"
	"testing"

	"kafkasim/history"
	"kafkasim/scenarios"
)

// Consumer-protocol (KIP-848) groups end to end: members driven by the
// membership manager against the brokers' group coordinator.

const consumerGroupFailover = `name: consumer-group-failover
duration: 60s
settle: 90s
cluster: { controllers: 1, brokers: 3 }
topics:
  - { name: orders, partitions: 6, replication.factor: 3 }
producers:
  - { name: p, count: 1, topic: orders, rate: 50/s, keys: 20 }
consumers:
  - name: c
    count: 3
    group: billing
    topics: [orders]
    commit: after-processing
    processing: 1ms..3ms
    config: { auto.offset.reset: earliest, group.protocol: consumer }
faults:
  - { at: 15s, crash: c-1, restart-after: 5s }
  - { at: 30s, crash: group-coordinator(billing), restart-after: 10s }
`

// Three consumer-protocol members through a member crash and their
// coordinator's crash: the group heals (every member STABLE at the
// assignment epoch, every partition owned once, lag 0) with no violation.
func TestConsumerProtocolGroupSurvivesMemberAndCoordinatorCrashes(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		s, err := scenarios.Parse("consumer-group-failover.yaml", []byte(consumerGroupFailover))
		if err != nil {
			t.Fatal(err)
		}
		s.Seed = seed
		res := runWith(t, s, Options{KeepCluster: true})
		if res.Verdict != Pass || !res.Converged {
			t.Fatalf("seed %d: verdict %s, converged %v (%s)\n%s", seed, res.Verdict, res.Converged, res.ConvergeDetail, explain(res))
		}
		assigns := 0
		for _, op := range res.Cluster.History.Ops() {
			if op.F == history.FAssign && op.Type == history.OK {
				assigns++
			}
		}
		if assigns < 4 {
			t.Fatalf("seed %d: %d assignments, want the members' and the restarted member's", seed, assigns)
		}
	}
}

// grantBeforeRelease has members join one by one while the first one
// owns everything: each join moves partitions away from a member that
// processes slowly, in small batches.
const grantBeforeRelease = `name: grant-before-release
bugs: [grant-before-release]
duration: 40s
settle: 90s
cluster: { controllers: 1, brokers: 3 }
topics:
  - { name: orders, partitions: 6, replication.factor: 3 }
producers:
  - { name: p, count: 1, topic: orders, rate: 100/s, keys: 20 }
consumers:
  - { name: a, count: 1, group: billing, topics: [orders], commit: after-processing, processing: 5ms..20ms,
      config: { auto.offset.reset: earliest, group.protocol: consumer, max.poll.records: 20 } }
  - { name: b, count: 2, group: billing, topics: [orders], commit: after-processing, processing: 5ms..20ms,
      config: { auto.offset.reset: earliest, group.protocol: consumer, max.poll.records: 20 } }
faults:
  - { at: 100ms, crash: b-0, restart-after: 10s }
  - { at: 100ms, crash: b-1, restart-after: 20s }
`

// overlaps counts pairs of process operations of one partition by two
// members that ran at once, and the pairs among them at one member epoch.
func overlaps(ops []history.Op) (all, sameEpoch int) {
	type span struct {
		start, end int64
		process    string
		epoch      int32
	}
	open := map[string]history.Op{}
	byPart := map[string][]span{}
	var parts []string
	for _, op := range ops {
		if op.F != history.FProcess {
			continue
		}
		part := fmt.Sprintf("%s-%d", op.Value.Topic, op.Value.Partition)
		k := fmt.Sprintf("%s/%s/%d", op.Process, part, op.Value.Offset)
		if op.Type == history.Invoke {
			open[k] = op
			continue
		}
		inv, ok := open[k]
		if !ok {
			continue
		}
		delete(open, k)
		if _, seen := byPart[part]; !seen {
			parts = append(parts, part)
		}
		byPart[part] = append(byPart[part], span{inv.Time, op.Time, op.Process, op.Value.Ext.Generation})
	}
	for _, part := range parts {
		spans := byPart[part]
		for i, x := range spans {
			for _, y := range spans[i+1:] {
				if x.process != y.process && x.start < y.end && y.start < x.end {
					all++
					if x.epoch == y.epoch {
						sameEpoch++
					}
				}
			}
		}
	}
	return all, sameEpoch
}

// With grant-before-release the coordinator hands a partition to a
// joining member while its owner still processes it: two members process
// one partition at once, and the checker reports double-owner (a
// violation). Without the bug the same schedule has no such overlap and
// heals. The overlapping members are at different member epochs (the
// owner keeps its epoch until it acknowledges the revocation, the new
// owner is at the target epoch): what shows the double owner is the old
// owner's commit of the partition, accepted at its epoch after the new
// owner began processing it (checker.checkUnreleased).
func TestGrantBeforeReleaseMakesTwoMembersProcessOnePartition(t *testing.T) {
	for _, bug := range []bool{true, false} {
		src := grantBeforeRelease
		if !bug {
			src = strings.Replace(src, "bugs: [grant-before-release]\n", "", 1)
		}
		s, err := scenarios.Parse("grant-before-release.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		s.Seed = 1
		res := runWith(t, s, Options{KeepCluster: true})
		all, same := overlaps(res.Cluster.History.Ops())
		switch {
		case bug && all == 0:
			t.Fatalf("with the bug: no two members processed one partition at once\n%s", explain(res))
		case bug && same != 0:
			t.Fatalf("with the bug: %d overlaps at one member epoch, want none (the epochs differ)", same)
		case bug && (res.Report.Count(checker.DoubleOwner) == 0 || res.Verdict == Pass):
			t.Fatalf("with the bug: double-owner %d, verdict %s; want double-owner reported\n%s", res.Report.Count(checker.DoubleOwner), res.Verdict, explain(res))
		case !bug && (all != 0 || res.Verdict != Pass || !res.Converged):
			t.Fatalf("without the bug: %d overlaps, verdict %s, converged %v\n%s", all, res.Verdict, res.Converged, explain(res))
		}
	}
}
