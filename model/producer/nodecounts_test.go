package producer

import "testing"

func TestNodeCountsCountByBroker(t *testing.T) {
	var c nodeCounts
	c.add(3, 1)
	c.add(7, 1)
	c.add(3, 1)
	c.add(7, -1)
	if c.get(3) != 2 || c.get(7) != 0 || c.get(5) != 0 {
		t.Fatalf("counts 3:%d 7:%d 5:%d, want 2, 0, 0", c.get(3), c.get(7), c.get(5))
	}
}
