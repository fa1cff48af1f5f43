package audit

import "kafkasim/godview"

// Facts are what the audit saw happen that Kafka permits to cost data or
// order, in order: committed data lost (godview.Loss), batches a leader's
// producer state forgot, or whose producer it forgot, or took from a
// producer it held nothing of, entries an unclean election resurrected. The
// cluster adds what it sees itself (model/cluster's Facts).
func (a *Audit) Facts() []godview.Fact { return a.facts }

// lastOf is the latest fact of kind, or nil. Records of one kind that repeat
// (a retry answered twice, a loss growing) are joined with it.
func (a *Audit) lastOf(kind godview.Kind) *godview.Fact {
	for i := len(a.facts) - 1; i >= 0; i-- {
		if a.facts[i].Kind == kind {
			return &a.facts[i]
		}
	}
	return nil
}
