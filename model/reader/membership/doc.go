// Package membership is a consumer-protocol (KIP-848) group member's
// membership manager on the client: the member's state, when it sends a
// ConsumerGroupHeartbeat and what the request carries, how it reconciles the
// assignment the coordinator hands out (revoke first, then assign, then
// acknowledge), and what it does on fencing, fatal errors, an expired poll
// timer and leaving.
//
// It follows Kafka 4.x's client (clients/src/main/java/org/apache/kafka/
// clients/consumer/internals/): AbstractMembershipManager and
// ConsumerMembershipManager (the state machine and reconciliation),
// MemberState (the states and their valid transitions),
// AbstractHeartbeatRequestManager and ConsumerHeartbeatRequestManager (when
// to heartbeat, backoff, error handling, the poll timer, and HeartbeatState's
// sent fields).
//
// The package is pure: the group member node that drives it passes the
// clock in, sends the requests it returns, feeds back their responses or
// failures, and carries out the actions it asks of the application (revoke,
// assign, lose partitions) reporting each one done. In Kafka the
// application thread runs the rebalance callbacks while the background
// thread waits on their futures; here each such wait is an Action the
// caller completes with Manager.ActionDone.
package membership
