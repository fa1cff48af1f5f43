package runner

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"kafkasim/model/cluster"
	"kafkasim/sim"
)

// nameSink collects the names of the messages a run delivers (a message's
// description starts with its name).
type nameSink struct{ names map[string]bool }

func (s *nameSink) Record(r sim.TraceRecord) {
	if r.Kind == "deliver" {
		name, _, _ := strings.Cut(r.Detail, " ")
		if name == "PreVote" {
			name = "Vote" // KIP-996: a Vote request with the pre-vote flag set
		}
		s.names[name] = true
	}
}

// checkMessageNames holds cluster.MessageNames, which a stall fault's
// messages are checked against, to what the bundled scenarios' runs
// delivered (TestBundledScenariosHoldTheirExpectations): it names every
// message they send, and every name in it but the CreatePartitions and
// ElectLeaders pairs (admin requests no bundled scenario makes) is sent by
// one of them.
func checkMessageNames(t *testing.T, sinks []*nameSink) {
	t.Helper()
	sent := map[string]bool{}
	for _, s := range sinks {
		for name := range s.names {
			sent[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sent)) {
		if !cluster.KnownMessageName(name) {
			t.Errorf("the cluster sends %q, which cluster.MessageNames lacks", name)
		}
	}
	for _, name := range cluster.MessageNames {
		if !sent[name] && !strings.HasPrefix(name, "CreatePartitions") && !strings.HasPrefix(name, "ElectLeaders") {
			t.Errorf("cluster.MessageNames lists %q, which no bundled scenario sends", name)
		}
	}
}
