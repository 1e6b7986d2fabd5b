package produce

import (
	"io"
	"os"

	"github.com/shardpipe/shardpipe/internal/orders"
)

// Open returns the records to send: gen's synthetic orders when from is "",
// else the JSON lines of the file from ("-": stdin), with their count (-1
// when unknown) and a function that closes the file. A file that cannot be
// opened is the error of os.Open.
func Open(from string, gen orders.GenConfig, stdin io.Reader) (next Next, total int64, closeFn func(), err error) {
	if from == "" {
		next, total := Generated(gen)
		return next, total, func() {}, nil
	}
	r, closeFn := stdin, func() {}
	if from != "-" {
		f, err := os.Open(from)
		if err != nil {
			return nil, 0, nil, err
		}
		r, closeFn = f, func() { _ = f.Close() }
	}
	return Lines(r, from), -1, closeFn, nil
}
