// Package assign holds the partition assignors of consumer groups, as pure,
// deterministic functions of their input.
//
// Client side (the classic protocol, KIP-429 for the cooperative one): the
// leader member of a classic group runs one of these in its JoinGroup
// response handling (Kafka's ConsumerCoordinator.onLeaderElected) and sends
// the result in its SyncGroup request. They follow Kafka 4's
// org.apache.kafka.clients.consumer.RangeAssignor, RoundRobinAssignor,
// StickyAssignor and CooperativeStickyAssignor (AbstractStickyAssignor's two
// builders, the constrained one for equal subscriptions and the general one
// otherwise).
//
// Server side (KIP-848 consumer groups): the group coordinator runs one of
// these to compute the target assignment when the group epoch moves. They
// follow org.apache.kafka.coordinator.group.assignor.UniformAssignor (its
// homogeneous and heterogeneous builders) and RangeAssignor.
//
// Determinism: where Kafka iterates a HashMap (whose order is a property of
// the JVM's hashing, not of the protocol), these iterate members sorted by
// member id, topics by name and partitions by number; no result depends on
// the order the caller lists members, topics or owned partitions in.
// Rack-aware assignment (KIP-881) is not modelled: no rack reaches these
// assignors' decisions.
package assign
