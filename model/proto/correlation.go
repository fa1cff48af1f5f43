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

// ProducerChannel is what a stream processor's producer half adds to its
// correlation ids (model/processor): one Kafka process holds a consumer and
// a producer, each with connections of its own to the brokers, so that a
// fetch parked at a broker (fetch.max.wait.ms, read_committed) never holds
// back the producer's Produce. The simulator has one link per pair of
// nodes; the broker tells the connections apart by this bit of the
// correlation id (ChannelOf). Every other client counts its ids from its
// incarnation's base and never reaches it.
const ProducerChannel = 1 << 31

// ChannelOf is the connection (0 or 1) of one process that a client request
// with correlation id corr came on.
func ChannelOf(corr uint64) uint8 { return uint8(corr >> 31 & 1) }
