// Package apicheck holds the tests that keep the public API of pipeline,
// sink and checkpoint what the project promises: every exported name and
// exported struct field documented, no fault-injection seam among them, and
// the Go snippets of README.md, CONTRIBUTING.md and docs/*.md compiling
// against it; and the docs' relative links and anchors resolving. It has
// no code of its own.
package apicheck
