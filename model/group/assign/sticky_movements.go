package assign

import (
	"slices"

	"kafkasim/model/proto"
)

// partitionMovements is AbstractStickyAssignor.PartitionMovements: where each
// moved partition came from and went to, so that the general builder moves
// a partition back to where it came from rather than moving a second one
// across the same pair of members (which would break stickiness).
type partitionMovements struct {
	byTopic map[string]map[memberPair][]proto.TopicPartition // each list sorted
	moves   map[proto.TopicPartition]memberPair
}

// memberPair is ConsumerPair: a partition moved from src to dst.
type memberPair struct{ src, dst string }

func newPartitionMovements() *partitionMovements {
	return &partitionMovements{
		byTopic: make(map[string]map[memberPair][]proto.TopicPartition),
		moves:   make(map[proto.TopicPartition]memberPair),
	}
}

func (pm *partitionMovements) removeRecord(tp proto.TopicPartition) memberPair {
	pair := pm.moves[tp]
	delete(pm.moves, tp)
	forTopic := pm.byTopic[tp.Topic]
	forTopic[pair] = removePartition(forTopic[pair], tp)
	if len(forTopic[pair]) == 0 {
		delete(forTopic, pair)
	}
	if len(forTopic) == 0 {
		delete(pm.byTopic, tp.Topic)
	}
	return pair
}

func (pm *partitionMovements) addRecord(tp proto.TopicPartition, pair memberPair) {
	pm.moves[tp] = pair
	forTopic := pm.byTopic[tp.Topic]
	if forTopic == nil {
		forTopic = make(map[memberPair][]proto.TopicPartition)
		pm.byTopic[tp.Topic] = forTopic
	}
	ps := forTopic[pair]
	i, _ := slices.BinarySearchFunc(ps, tp, comparePartitions)
	forTopic[pair] = slices.Insert(ps, i, tp)
}

func (pm *partitionMovements) movePartition(tp proto.TopicPartition, from, to string) {
	if _, moved := pm.moves[tp]; moved {
		existing := pm.removeRecord(tp)
		if existing.src != to {
			pm.addRecord(tp, memberPair{src: existing.src, dst: to})
		}
		return
	}
	pm.addRecord(tp, memberPair{src: from, dst: to})
}

// actualPartitionToMove is getTheActualPartitionToBeMoved: if a partition of
// tp's topic already moved from `to` to `from`, move that one back instead
// (Kafka takes any such partition from a HashSet; this takes the lowest).
func (pm *partitionMovements) actualPartitionToMove(tp proto.TopicPartition, from, to string) proto.TopicPartition {
	forTopic, ok := pm.byTopic[tp.Topic]
	if !ok {
		return tp
	}
	if pair, moved := pm.moves[tp]; moved {
		from = pair.src
	}
	reverse, ok := forTopic[memberPair{src: to, dst: from}]
	if !ok {
		return tp
	}
	return reverse[0]
}
