package metadata

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// Place assigns replicas to brokers for new partitions, rack-aware, after
// Kafka's StripedReplicaPlacer: racks in name order and brokers in id order,
// each list started at a random offset; a partition's first replica (its
// preferred leader) is the next unfenced broker, its other replicas come from
// the following racks in turn, unfenced brokers before fenced ones; each
// partition starts one rack further on. Brokers in controlled shutdown are
// not used.
func Place(brokers []*Broker, partitions, replicationFactor int, rng *rand.Rand) ([][]int32, error) {
	type rack struct {
		name            string
		unfenced, fence []int32
		base, next      int
	}
	byRack := map[string]*rack{}
	usable, unfencedCount := 0, 0
	for _, b := range brokers {
		if b.InControlledShutdown {
			continue
		}
		r, ok := byRack[b.Rack]
		if !ok {
			r = &rack{name: b.Rack}
			byRack[b.Rack] = r
		}
		if b.Fenced {
			r.fence = append(r.fence, b.ID)
		} else {
			r.unfenced = append(r.unfenced, b.ID)
			unfencedCount++
		}
		usable++
	}
	switch {
	case replicationFactor <= 0:
		return nil, fmt.Errorf("replication factor must be larger than 0")
	case replicationFactor > usable:
		return nil, fmt.Errorf("replication factor %d cannot be reached because only %d broker(s) are registered", replicationFactor, usable)
	case unfencedCount == 0:
		return nil, fmt.Errorf("all brokers are currently fenced")
	}
	racks := make([]*rack, 0, len(byRack))
	for _, r := range byRack { // kafkasim:orderless: sorted below
		slices.Sort(r.unfenced)
		slices.Sort(r.fence)
		racks = append(racks, r)
	}
	sort.Slice(racks, func(i, j int) bool { return racks[i].name < racks[j].name })
	for _, r := range racks {
		if n := len(r.unfenced) + len(r.fence); n > 0 {
			r.base = rng.IntN(n)
		}
	}
	rackStart := rng.IntN(len(racks))
	take := func(r *rack, chosen []int32, unfencedOnly bool) (int32, bool) {
		all := append(slices.Clone(r.unfenced), r.fence...)
		limit := len(all)
		if unfencedOnly {
			limit = len(r.unfenced)
		}
		for i := 0; i < len(all); i++ {
			idx := (r.next + i) % len(all)
			if idx >= limit || slices.Contains(chosen, all[idx]) {
				continue
			}
			r.next = idx + 1
			return all[idx], true
		}
		return 0, false
	}
	out := make([][]int32, partitions)
	for p := range partitions {
		// Stripe: each partition starts one rack further on, and once every
		// rack had a turn, one broker further on within each rack.
		for _, r := range racks {
			if n := len(r.unfenced) + len(r.fence); n > 0 {
				r.next = (r.base + p/len(racks)) % n
			}
		}
		var replicas []int32
		start := (rackStart + p) % len(racks)
		for i := 0; i < len(racks) && len(replicas) == 0; i++ {
			if b, ok := take(racks[(start+i)%len(racks)], replicas, true); ok {
				replicas = append(replicas, b)
			}
		}
		for step := 1; len(replicas) < replicationFactor; step++ {
			r := racks[(start+step)%len(racks)]
			if b, ok := take(r, replicas, true); ok {
				replicas = append(replicas, b)
			} else if b, ok := take(r, replicas, false); ok {
				replicas = append(replicas, b)
			}
			if step > replicationFactor*len(racks)*4 {
				return nil, fmt.Errorf("cannot place %d replicas", replicationFactor)
			}
		}
		out[p] = replicas
	}
	return out, nil
}
