package db

import (
	"context"
	"sync"
	"testing"

	"github.com/meshhq/hq/db/driver"
)

// Reads at the pool's full width keep its connections: none is closed for want of room among
// the idle ones, only to be opened again (schema read, statements prepared) for the next read.
func TestTheReadPoolKeepsItsConnections(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	mustNode(t, s, "n0")
	ctx := context.Background()
	width := s.read.Stats().MaxOpenConnections
	for range 3 {
		// Every read holds its connection until all of them hold one.
		var inside sync.WaitGroup
		inside.Add(width)
		var wg sync.WaitGroup
		for range width {
			wg.Go(func() {
				err := s.inReadTx(ctx, func(q driver.Queries) error {
					_, err := q.NodeTokenCheck(ctx, "n0")
					inside.Done()
					inside.Wait()
					return err
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if st := s.read.Stats(); st.MaxIdleClosed > 0 {
		t.Errorf("%d of the read pool's %d connections were closed as idle beyond the limit, to be opened again", st.MaxIdleClosed, width)
	}
}
