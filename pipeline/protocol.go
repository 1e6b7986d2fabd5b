package pipeline

import "fmt"

// Protocol selects the consumer group protocol.
type Protocol uint8

const (
	// Classic is the classic group protocol with the cooperative-sticky
	// balancer; the epoch is the group generation.
	Classic Protocol = iota
	// Consumer is the KIP-848 consumer protocol (server-side assignment);
	// the epoch is the member epoch. Needs Kafka 4.0+, mature from 4.3.
	Consumer
)

// ParseProtocol reads "classic" or "consumer".
func ParseProtocol(s string) (Protocol, error) {
	switch s {
	case "classic":
		return Classic, nil
	case "consumer":
		return Consumer, nil
	}
	return 0, fmt.Errorf("group protocol %q: want classic or consumer", s)
}

// String returns "classic" or "consumer", as ParseProtocol reads them.
func (p Protocol) String() string {
	if p == Consumer {
		return "consumer"
	}
	return "classic"
}
