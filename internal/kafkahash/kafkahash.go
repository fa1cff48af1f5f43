// Package kafkahash is the arithmetic by which Kafka maps a key to the
// partition of an internal topic whose leader coordinates it: both the model
// (which broker coordinates a group) and the checker (which partition's loss
// can explain a group's anomaly) must agree with Kafka on it.
package kafkahash

// StringHashCode is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the string's UTF-16 code units, in int32 arithmetic.
func StringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 { // a surrogate pair in UTF-16
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// Abs is Kafka's Utils.abs: the absolute value, 0 for MIN_VALUE (whose
// absolute value does not fit).
func Abs(n int32) int32 {
	if n == -1<<31 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

// CoordinatorPartition is the partition of an internal topic with
// numPartitions partitions whose leader coordinates key: a group id on
// __consumer_offsets (GroupCoordinatorService.partitionFor), a
// transactional id on __transaction_state (TransactionStateManager.
// partitionFor) — Utils.abs(key.hashCode()) % numPartitions.
func CoordinatorPartition(key string, numPartitions int) int32 {
	return Abs(StringHashCode(key)) % int32(numPartitions)
}
