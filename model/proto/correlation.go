package proto

// CorrelationBase is where a client process's correlation ids start, by its
// incarnation. Kafka matches a response to its request on the connection
// the request went out on (NetworkClient.correlate, InFlightRequests per
// node connection): a restarted process has new connections, so an answer
// to what its previous process asked — a JoinGroup parked in the
// coordinator and answered FENCED_INSTANCE_ID when the restarted static
// member replaced it (ClassicGroup.replaceStaticMember), a produce request
// parked until its followers caught up — never reaches it. The simulated
// network has one link per pair of nodes across incarnations; numbering
// each incarnation's requests apart keeps such an answer from matching a
// request of the new process. The first incarnation starts at 0, so a
// process that never restarts numbers its requests as it always did.
func CorrelationBase(incarnation uint32) uint64 {
	if incarnation <= 1 {
		return 0
	}
	return uint64(incarnation-1) << 32
}
