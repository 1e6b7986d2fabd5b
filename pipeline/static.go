package pipeline

// InstanceID makes the pipeline a static member of its group
// (group.instance.id, KIP-345; in the consumer protocol, KIP-848's static
// membership): a process that restarts with the same ID within the session
// timeout gets its partitions back without a rebalance of the group.
//
// What it changes about stopping: Close and the end of Run's context still
// drain and commit every partition, but the pipeline does not leave the
// group. In the classic protocol no LeaveGroup is sent (franz-go sends one
// only when the member revoked partitions in a rebalance it had not
// finished), and the partitions stay assigned to the ID, unconsumed, until
// a process with that ID returns or SessionTimeout passes. In the consumer
// protocol the final heartbeat is a temporary leave (member epoch -2),
// which should keep them reserved until the broker's
// group.consumer.session.timeout.ms; but with franz-go v1.22.3 on Kafka 4
// a restart right after it was refused (UNRELEASED_INSTANCE_ID) for some
// seconds, during which the group gave its partitions to other members:
// rely on it in the classic protocol only. Each process
// needs its own ID: one that joins with an ID in use fences the other,
// whose commits the broker then refuses. Default: none (dynamic
// membership: a stop leaves at once and the group rebalances); an empty
// id is the same as none.
func InstanceID(id string) GroupOpt {
	return groupOpt(func(c *config) { c.instanceID = id })
}
