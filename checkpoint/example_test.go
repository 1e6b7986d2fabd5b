package checkpoint_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// A worker of a superseded assignment cannot move the offset, and an offset
// never goes backwards inside one epoch.
func ExampleMemory() {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	p := checkpoint.Partition{Topic: "orders", Partition: 0}

	fmt.Println(store.Commit(ctx, p, 1, 30))                                       // first term
	fmt.Println(store.Commit(ctx, p, 1, 30))                                       // same offset again: a no-op
	fmt.Println(errors.Is(store.Commit(ctx, p, 1, 20), checkpoint.ErrStaleOffset)) // backwards
	fmt.Println(store.Commit(ctx, p, 2, 37))                                       // a new owner
	fmt.Println(errors.Is(store.Commit(ctx, p, 1, 40), checkpoint.ErrStaleEpoch))  // the old owner wakes up
	pos, _ := store.Load(ctx, p)
	fmt.Printf("epoch=%d offset=%d\n", pos.Epoch, pos.Offset)
	// Output:
	// <nil>
	// <nil>
	// true
	// <nil>
	// true
	// epoch=2 offset=37
}

// The commit point never passes a record whose effect is unknown.
func ExampleTracker() {
	tr := checkpoint.NewTracker(checkpoint.Partition{Topic: "orders"}, 0)
	for off := int64(0); off < 4; off++ {
		_ = tr.Start(off, 0)
	}
	_ = tr.Land(0)
	_ = tr.Land(2) // lands before 1
	fmt.Println(tr.CommitPoint())
	_ = tr.Land(1)
	fmt.Println(tr.CommitPoint())
	// Output:
	// 1
	// 3
}

// Commit every 10 records, or one second after the first uncommitted one.
func ExamplePolicy() {
	p := checkpoint.Policy{Every: 10}
	fmt.Println(p.Room(7, 500)) // a batch of 3 brings the next commit exactly at 10
	// Output: 3
}
