package cluster

import (
	"fmt"
	"slices"
	"strings"

	"kafkasim/sim"
)

// txnCoordinatorSelector resolves txn-coordinator(ID) when a fault fires:
// the broker leading transactional id ID's partition of
// __transaction_state (TransactionStateManager.partitionFor; none while the
// topic does not exist or the partition has no leader). ID is an
// instance's transactional.id: "<transactional.id>-<instance>".
var txnCoordinatorSelector = modelSelector{form: "txn-coordinator(TRANSACTIONAL-ID)",
	resolve: func(c *Cluster, sel string) ([]sim.NodeID, bool, error) {
		id, ok := sim.ParseCall(sel, "txn-coordinator")
		if !ok {
			return nil, false, nil
		}
		b := c.TransactionCoordinator(id)
		if b < 1 || int(b) > len(c.Brokers) {
			return nil, true, nil
		}
		return []sim.NodeID{c.BrokerNode(b)}, true, nil
	},
	validate: func(c *Cluster, sel string) (bool, error) {
		id, ok := sim.ParseCall(sel, "txn-coordinator")
		if !ok {
			return false, nil
		}
		ids := c.TransactionalIDs()
		if !slices.Contains(ids, id) {
			if len(ids) == 0 {
				return true, fmt.Errorf("%s: no transactional id %q (the scenario has no transactional producer)", sel, id)
			}
			return true, fmt.Errorf("%s: no transactional id %q (transactional ids: %s)", sel, id, strings.Join(ids, ", "))
		}
		return true, nil
	}}

// TransactionalIDs are the transactional ids of the cluster's producers,
// then of its readers' transactional producers (exactly-once processors,
// consumers with commit: transactional), one per instance, in the order
// they were configured.
func (c *Cluster) TransactionalIDs() []string {
	var ids []string
	for _, ps := range c.cfg.Producers {
		if ps.Config.TransactionalID == "" {
			continue
		}
		for i := range ps.Count {
			ids = append(ids, ClientName(ps.Config.TransactionalID, i))
		}
	}
	for _, rs := range c.cfg.Readers {
		if rs.Processor == nil || rs.Processor.Producer.TransactionalID == "" {
			continue
		}
		for i := range rs.Count {
			ids = append(ids, ClientName(rs.Processor.Producer.TransactionalID, i))
		}
	}
	return ids
}
