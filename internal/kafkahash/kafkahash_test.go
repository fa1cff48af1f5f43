package kafkahash

import "testing"

// The expected values are Java's, worked out from String.hashCode's
// definition (s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, int32
// arithmetic) and Utils.abs (MIN_VALUE gives 0).
func TestCoordinatorPartitionIsKafkas(t *testing.T) {
	for _, c := range []struct {
		key      string
		hash     int32
		part50   int32
		part3    int32
		comments string
	}{
		{"", 0, 0, 0, "empty"},
		{"a", 97, 47, 1, "one char"},
		{"ab", 3105, 5, 0, "97*31+98"},
		{"group", 98629247, 47, 2, ""},
		{"Aa", 2112, 12, 0, "collides with BB"},
		{"BB", 2112, 12, 0, ""},
		{"polygenelubricants", -2147483648, 0, 0, "MIN_VALUE: Utils.abs gives 0"},
		{"consumer-group-1", 147483020, 20, 2, "overflows int32"},
		{"zzzzzzzzzz", -1580979136, 36, 1, "negative"},
		{"😀", 1772899, 49, 1, "a surrogate pair: 0xD83D*31+0xDE00"},
		{"é-grüppe", -1897389896, 46, 2, "non-ASCII in the BMP"},
	} {
		if h := StringHashCode(c.key); h != c.hash {
			t.Errorf("%q.hashCode() = %d, want %d", c.key, h, c.hash)
		}
		if p := CoordinatorPartition(c.key, 50); p != c.part50 {
			t.Errorf("CoordinatorPartition(%q, 50) = %d, want %d", c.key, p, c.part50)
		}
		if p := CoordinatorPartition(c.key, 3); p != c.part3 {
			t.Errorf("CoordinatorPartition(%q, 3) = %d, want %d", c.key, p, c.part3)
		}
	}
}
