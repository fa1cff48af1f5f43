package producer

// inflightTable holds the produce requests in flight, by correlation id, in
// the order they were sent (ids only grow, so that is id order too): a
// producer has a few dozen at most (max.in.flight.requests.per.connection
// per broker), and answers mostly come oldest first, so a scan from the
// oldest finds one sooner than a map's hashing would.
type inflightTable struct {
	reqs []inflightEntry
}

type inflightEntry struct {
	corr uint64
	req  *inflightReq
}

func (t *inflightTable) len() int { return len(t.reqs) }

// add records request corr, which must be later than every one held.
func (t *inflightTable) add(corr uint64, req *inflightReq) {
	if n := len(t.reqs); n > 0 && t.reqs[n-1].corr >= corr {
		panic("producer: in-flight requests out of correlation order")
	}
	t.reqs = append(t.reqs, inflightEntry{corr, req})
}

// get returns request corr, or nil.
func (t *inflightTable) get(corr uint64) *inflightReq {
	for _, e := range t.reqs {
		if e.corr == corr {
			return e.req
		}
	}
	return nil
}

// remove drops request corr, if held.
func (t *inflightTable) remove(corr uint64) {
	for i, e := range t.reqs {
		if e.corr == corr {
			copy(t.reqs[i:], t.reqs[i+1:])
			t.reqs[len(t.reqs)-1] = inflightEntry{}
			t.reqs = t.reqs[:len(t.reqs)-1]
			return
		}
	}
}

// nodeCounts counts requests in flight by broker: a handful of brokers, so
// a list, not a map.
type nodeCounts struct {
	ids []int32
	n   []int
}

func (c *nodeCounts) get(id int32) int {
	for i, x := range c.ids {
		if x == id {
			return c.n[i]
		}
	}
	return 0
}

func (c *nodeCounts) add(id int32, delta int) {
	for i, x := range c.ids {
		if x == id {
			c.n[i] += delta
			return
		}
	}
	c.ids = append(c.ids, id)
	c.n = append(c.n, delta)
}
