package pgeffect

// Opt is an option of New.
type Opt func(*Effect)

// PerTopic keeps each topic's keys apart in the inbox (the inbox key is
// topic:key), as the ledger's per-topic key space does; without it one key
// applied from any topic is done for all.
func PerTopic() Opt { return func(e *Effect) { e.perTopic = true } }
