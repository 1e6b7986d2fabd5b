package main

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/buildinfo"
)

// clientIDOpt sets shardpipe's client ID (buildinfo.ClientID) on a
// franz-go client.
func clientIDOpt() kgo.Opt { return kgo.ClientID(buildinfo.ClientID()) }
