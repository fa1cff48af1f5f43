package partlog

// OngoingTxn is one producer's transaction still undecided on a partition
// (no marker yet): its producer, epoch and first offset.
type OngoingTxn struct {
	ProducerID  int64
	Epoch       int16
	FirstOffset int64
}

// OngoingTxns lists the partition's undecided transactions by first offset
// (ProducerStateManager.ongoingTxns): the god view's search for hanging
// transactions reads it, nothing changes.
func (p *ProducerState) OngoingTxns() []OngoingTxn {
	if p.txn == nil {
		return nil
	}
	out := make([]OngoingTxn, 0, len(p.txn.ongoing))
	for _, m := range p.txn.ongoing {
		t := OngoingTxn{ProducerID: m.pid, Epoch: -1, FirstOffset: m.firstOffset}
		if e := p.Entry(m.pid); e != nil {
			t.Epoch = e.Epoch
		}
		out = append(out, t)
	}
	return out
}
