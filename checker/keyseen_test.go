package checker

import "testing"

// The table keeps every key apart: packed ones by their word, those whose
// producer or topic number does not fit by the whole id, and a wide id is
// never found under a packed one's word or the other way round.
func TestKeySeenTableKeepsKeysApart(t *testing.T) {
	ids := []keyID{
		{producer: 0, topic: 0, key: -1},
		{producer: 0, topic: 0, key: 0},
		{producer: 1, topic: 0, key: 0},
		{producer: 0, topic: 1, key: 0},
		{producer: 1<<20 - 1, topic: 1<<12 - 1, key: 1<<31 - 1},
		{producer: 1 << 20, topic: 0, key: 0}, // wide: producer
		{producer: 0, topic: 1 << 12, key: 0}, // wide: topic
		{producer: -2, topic: 0, key: 5},      // wide: negative
		{producer: 1 << 20, topic: 1 << 12, key: -1},
	}
	var tab keySeenTable
	for i, id := range ids {
		if _, ok := tab.get(id); ok {
			t.Fatalf("%+v found before it was put", id)
		}
		tab.put(id, keySeen{rank: int32(i)})
	}
	for i, id := range ids {
		got, ok := tab.get(id)
		if !ok || got.rank != int32(i) {
			t.Errorf("%+v: got %+v, %v; want rank %d", id, got, ok, i)
		}
	}
	if n := len(tab.packed) + len(tab.wide); n != len(ids) {
		t.Errorf("table holds %d keys, want %d", n, len(ids))
	}
	if len(tab.wide) != 4 {
		t.Errorf("wide keys: %d, want 4", len(tab.wide))
	}
}
