package producer

// VerifyQueued lets the tests check the sender's list of queued partitions.
var VerifyQueued = &verifyQueued
