package group

// javaStringHashCode is Java's String.hashCode: s[0]*31^(n-1) + ... +
// s[n-1] over the string's UTF-16 code units, in int32 arithmetic.
func javaStringHashCode(s string) int32 {
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

// kafkaAbs is Kafka's Utils.abs: the absolute value, 0 for MIN_VALUE
// (whose absolute value does not fit).
func kafkaAbs(n int32) int32 {
	if n == -1<<31 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

// partitionFor is the partition of __consumer_offsets whose leader
// coordinates groupID (GroupCoordinatorService.partitionFor:
// Utils.abs(groupId.hashCode()) % numPartitions).
func partitionFor(groupID string, numPartitions int) int32 {
	return kafkaAbs(javaStringHashCode(groupID)) % int32(numPartitions)
}
