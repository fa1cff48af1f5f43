package txn

import (
	"strconv"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// pidManager is RPCProducerIdManager: producer ids from blocks the active
// controller allocates (AllocateProducerIds). The next block is asked for
// when 90% of the current one is used; with no id left,
// generate fails COORDINATOR_LOAD_IN_PROGRESS (the producer retries) and
// asks for a block, one request at a time, none within the backoff after
// a failed one.
type pidManager struct {
	c            *coordinator
	cur, next    pidBlock
	nextID       int64
	inflight     uint64 // the request's correlation id; 0: none
	to           sim.NodeID
	timer        sim.TimerID
	backoffUntil time.Duration
}

type pidBlock struct {
	start int64
	size  int64 // 0: none
}

type pidTimeout struct{ Correlation uint64 }

func (t pidTimeout) String() string {
	return "txn.pidTimeout {correlation:" + strconv.FormatUint(t.Correlation, 10) + "}"
}

// generate is generateProducerId.
func (m *pidManager) generate() (int64, proto.ErrorCode) {
	if m.cur.size > 0 && m.nextID < m.cur.start+m.cur.size {
		id := m.nextID
		m.nextID++
		if m.nextID >= m.cur.start+m.cur.size*9/10 {
			m.maybeRequest()
		}
		return id, proto.None
	}
	if m.next.size > 0 {
		m.cur, m.next, m.nextID = m.next, pidBlock{}, m.next.start
		return m.generate()
	}
	m.maybeRequest()
	return proto.NoProducerID, proto.CoordinatorLoadInProgress
}

// maybeRequest is maybeRequestNextBlock.
func (m *pidManager) maybeRequest() {
	c := m.c
	if m.inflight != 0 || m.next.size > 0 || c.t.Now() < m.backoffUntil {
		return
	}
	to, brokerEpoch := c.t.Controller()
	if to == sim.NoNode || brokerEpoch < 0 {
		m.backoffUntil = c.t.Now() + c.cfg.RetryBackoff
		return
	}
	c.corr++
	m.inflight, m.to = c.corr, to
	m.timer = c.t.After(c.cfg.RequestTimeout, pidTimeout{Correlation: c.corr})
	c.t.Send(to, &proto.AllocateProducerIdsRequest{CorrelationID: c.corr, BrokerID: c.t.BrokerID(), BrokerEpoch: brokerEpoch})
}

// answered is handleAllocateProducerIdsResponse: a block, or the backoff.
func (m *pidManager) answered(r *proto.AllocateProducerIdsResponse) {
	if r.CorrelationID != m.inflight {
		return
	}
	m.inflight = 0
	m.c.t.Cancel(m.timer)
	if r.Error == proto.None && r.ProducerIDStart >= 0 && r.ProducerIDLen > 0 {
		m.next = pidBlock{start: r.ProducerIDStart, size: int64(r.ProducerIDLen)}
		return
	}
	m.backoffUntil = m.c.t.Now() + m.c.cfg.RetryBackoff
}

func (m *pidManager) timedOut(t pidTimeout) {
	if t.Correlation == m.inflight {
		m.inflight = 0
	}
}

func (m *pidManager) disconnected(peer sim.NodeID) {
	if m.inflight != 0 && m.to == peer {
		m.inflight = 0
		m.c.t.Cancel(m.timer)
	}
}
