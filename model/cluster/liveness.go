package cluster

import (
	"fmt"

	"kafkasim/model/broker"
	"kafkasim/sim"
)

// ControlPlaneConverged reports whether the control plane has healed: one
// active controller that every running controller follows, and every broker
// running, registered and unfenced in the committed metadata. When it has
// not, the reason says what is missing.
func (c *Cluster) ControlPlaneConverged() (bool, string) {
	w := c.World
	active, activeID := c.ActiveController()
	if active == nil {
		return false, "no active controller"
	}
	epoch := active.Raft().Epoch()
	for _, id := range c.Controllers {
		n := c.Controller(id)
		if n == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		if r := n.Raft(); r.Epoch() != epoch || r.Leader() != activeID {
			return false, fmt.Sprintf("%s follows %d in epoch %d, not %s in epoch %d", w.Name(id), r.Leader(), r.Epoch(), w.Name(activeID), epoch)
		}
	}
	im := active.Image()
	for i, id := range c.Brokers {
		bid := int32(i + 1)
		b := c.Broker(bid)
		if b == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		if b.State() != broker.StateRunning {
			return false, fmt.Sprintf("%s is %s", w.Name(id), b.State())
		}
		reg, ok := im.Brokers[bid]
		if !ok || reg.Fenced || reg.Epoch != b.BrokerEpoch() {
			return false, fmt.Sprintf("%s is not registered and unfenced at its epoch %d in the committed metadata", w.Name(id), b.BrokerEpoch())
		}
	}
	return true, ""
}
