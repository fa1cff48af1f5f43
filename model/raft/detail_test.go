package raft

import (
	"fmt"
	"testing"

	"kafkasim/model/proto"
)

// The metadata fetches' trace details are built without fmt: they must read
// as fmt's format did.
func TestFetchDetailsReadAsFormatted(t *testing.T) {
	for _, m := range []*FetchRequest{
		{ReplicaID: 7, CurrentLeaderEpoch: 3, FetchOffset: 1234, LastFetchedEpoch: 2, HighWatermark: 1200},
		{ReplicaID: -1, CurrentLeaderEpoch: 0, FetchOffset: 0, LastFetchedEpoch: -1, HighWatermark: -1, Observer: true},
	} {
		want := fmt.Sprintf("Fetch(metadata) replica=%d epoch=%d offset=%d lastEpoch=%d hw=%d", m.ReplicaID, m.CurrentLeaderEpoch, m.FetchOffset, m.LastFetchedEpoch, m.HighWatermark)
		if got := m.String(); got != want {
			t.Errorf("request: got %q, want %q", got, want)
		}
	}
	for _, m := range []*FetchResponse{
		{Error: proto.None, LeaderID: 1, LeaderEpoch: 4, HighWatermark: 99, Entries: make([]Entry, 3)},
		{Error: proto.FencedLeaderEpoch, LeaderID: -1, LeaderEpoch: 5, HighWatermark: -1, Diverging: &DivergingEpoch{Epoch: 2, EndOffset: 17}},
		{Error: proto.ErrorCode(-77), Diverging: &DivergingEpoch{Epoch: -1, EndOffset: -1}},
	} {
		div := ""
		if m.Diverging != nil {
			div = fmt.Sprintf(" diverging=(%d,%d)", m.Diverging.Epoch, m.Diverging.EndOffset)
		}
		want := fmt.Sprintf("FetchResponse(metadata) err=%s leader=%d epoch=%d hw=%d entries=%d%s", m.Error, m.LeaderID, m.LeaderEpoch, m.HighWatermark, len(m.Entries), div)
		if got := m.String(); got != want {
			t.Errorf("response: got %q, want %q", got, want)
		}
	}
}
