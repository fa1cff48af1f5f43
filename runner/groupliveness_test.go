package runner

import "testing"

// The regression scenarios of what Kafka's group protocols cannot heal
// from pass for the reason their summaries give, not because the group
// happened to settle: the convergence they report names it.
func TestGroupLivenessExcuses(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"testdata/group-rebalance-timeout-below-heartbeat-not-judged.yaml",
			[]string{"not judged: ", "group billing's rebalance timeout is 1s", "b-0 and b-1 heartbeat every 4s"}},
		{"testdata/group-auto-commit-interval-outlasting-the-grace-judged-after-its-first-auto-commit.yaml",
			[]string{"consumer groups judged after the first auto-commit of c-0, c-1"}},
		{"testdata/group-static-restart-within-session-unreleased.yaml",
			[]string{"consumer groups judged without a member Kafka would stop too: ", "b-0 stopped on UNRELEASED_INSTANCE_ID", "a previous incarnation"}},
		{"testdata/group-static-leader-keeps-assignment-misses-added-partitions.yaml",
			[]string{"not judged: group billing: no member owns orders-1, orders-2", "leader b-0 rejoined as a static member", "KIP-814"}},
		{"testdata/group-truncated-position-commits-nothing-not-judged.yaml",
			[]string{"not judged: group billing: committed offset of orders-0 is 74, below the high watermark 75", "truncated under b-0's position (offsets 75..179 lost, power-loss", "commit: before-processing"}},
		{"testdata/group-offsets-commit-lost-at-position-not-judged.yaml",
			[]string{"not judged: group billing: committed offset of orders-2 is 45, below the high watermark 51: the group's last acknowledged commit of it, 51, what b-0 processed (its position 51), was lost with __consumer_offsets-9's committed data (offsets 121..143, power-loss"}},
		{"testdata/group-offsets-commit-lost-below-a-marker-at-the-position-not-judged.yaml",
			[]string{"not judged: group ledger: committed offset of orders-2 is 1, below the high watermark 16: the group's last acknowledged commit of it, 15, what l-1 processed (its position 16), was lost with __consumer_offsets-39's committed data"}},
		{"testdata/group-static-member-fenced-after-records-lost-not-judged.yaml",
			[]string{"consumer groups judged without a member Kafka would stop too: b-1 stopped on OffsetCommit: FENCED_INSTANCE_ID",
				"whose records hold its group.instance.id b-1 under member id", "__consumer_offsets-9 offsets 5..47 were lost"}},
		{"testdata/group-static-member-fenced-by-unstored-id-judged-without.yaml",
			[]string{"consumer groups judged without a member Kafka would stop too: l-0 stopped on JoinGroup: FENCED_INSTANCE_ID",
				"broker-2 gave it generation 3", "its coordinator broker-3", "Kafka answers a join phase before it writes anything"}},
		{"testdata/group-consumer-static-member-fenced-after-records-lost-judged-without.yaml",
			[]string{"consumer groups judged without a member Kafka would stop too: b-1 stopped on ConsumerGroupHeartbeat: FENCED_INSTANCE_ID",
				"__consumer_offsets-9 offsets 37..365 were lost", "with its group.instance.id b-1 under member id", "throwIfInstanceIdIsFenced"}},
		{"testdata/group-static-members-fenced-by-deposed-coordinators-joins-not-judged.yaml",
			[]string{"consumer groups judged without a member Kafka would stop too: l-0 stopped on JoinGroup: FENCED_INSTANCE_ID",
				"broker-1 gave it generation 5", "its coordinator broker-2", "Kafka answers a join phase before it writes anything"}},
		{"testdata/group-static-member-fenced-by-reverted-rejoin-judged-without.yaml",
			[]string{"consumer groups judged without a member Kafka would stop too: b-0 stopped on SyncGroup: FENCED_INSTANCE_ID",
				"broker-2 gave it generation 2", "its coordinator broker-2", "put group billing's group.instance.id b-0 back under member id",
				"the write that stored", "Kafka reverts so whatever the group became meanwhile"}},
		{"testdata/group-consumer-paused-member-reads-join-answer-after-records-lost.yaml",
			[]string{"not judged: group billing: its records on __consumer_offsets-9 were lost (offsets 0..10",
				"b-0, b-1 stopped on GROUP_ID_NOT_FOUND"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			expectDetail(t, runConverged(t, tc.file), tc.want...)
		})
	}
}
