package audit

import (
	"slices"

	"kafkasim/model/metadata"
)

// ReplicaDeleted: a reassignment removed broker's replica of tp and the
// broker deleted its log. That is no loss: the reassignment completed only
// once every new replica was in the ISR, holding everything committed, and
// the audit checks the new replicas as it does any other. What it knew of
// the deleted replica is forgotten, so that a later reassignment back to
// the broker starts from an empty log, not from what the old one held.
func (a *Audit) ReplicaDeleted(broker int32, tp metadata.TopicPartition) {
	p := a.part(tp)
	p.checks = slices.DeleteFunc(p.checks, func(c replicaCheck) bool { return c.broker == broker })
	p.agreements = slices.DeleteFunc(p.agreements, func(g agreement) bool { return g.broker == broker })
	p.joinAgreements = slices.DeleteFunc(p.joinAgreements, func(j joinAgreement) bool { return j.leader == broker || j.member == broker })
	delete(p.shortSince, broker)
	delete(p.diskCause, broker)
	delete(p.diskFaults, broker)
	delete(p.proposedShort, broker)
}
