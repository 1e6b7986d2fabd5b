// Package chaos drives shardpipe's fault suite: three `shardpipe run` OS
// processes in one group on a Kafka broker and a Redis of their own, fed
// by `shardpipe produce` while a seeded schedule kills consumers, pauses one
// past its session timeout (a zombie), crashes Redis and restarts the
// broker, once per group protocol. The verdict comes from package
// chaoscheck, which shares no code with shardpipe.
package chaos
