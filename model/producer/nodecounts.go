package producer

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
