package cli

import (
	"context"
	"io"
	"time"

	"github.com/taskloom/taskloom/internal/progressline"
)

// watchInterval is how often a waiting command reads the progress it shows.
const watchInterval = 500 * time.Millisecond

// watch runs wait while a progress line labelled label on w shows what poll reads every
// watchInterval (done and total units; total 0 while unknown), and once more when wait returns.
// A failed poll keeps the line as it was: the progress is a view, wait's result is the answer.
func watch(ctx context.Context, w io.Writer, label string, poll func(context.Context) (done, total int, err error), wait func() error) error {
	line := progressline.New(w, 0, label)
	defer line.Done()
	show := func() {
		if done, total, err := poll(ctx); err == nil {
			line.SetTotal(total)
			line.Set(done)
		}
	}
	result := make(chan error, 1)
	go func() { result <- wait() }()
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	show()
	for {
		select {
		case err := <-result:
			show()
			return err
		case <-tick.C:
			show()
		}
	}
}
