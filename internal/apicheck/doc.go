// Package apicheck holds the tests that keep the public API of pipeline,
// sink and checkpoint what the project promises: every exported name and
// exported struct field documented, no fault-injection seam among them, and
// the README's Go snippets compiling against it; and cmd/shardpipe under its
// line budget (TestCmdStaysSmall). It has no code of its own.
package apicheck
