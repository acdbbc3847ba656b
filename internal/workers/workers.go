// Package workers runs a process's background work as one group: each worker in a goroutine of
// its own, started in the order given, each ready before the next starts, and all stopped
// together and waited for. It lets one function say everything that runs beside the requests,
// and stop it before what the workers use (a database) is closed.
package workers

import (
	"context"
	"log/slog"
	"sync"
)

// Worker is one piece of background work.
type Worker interface {
	// Name says what the worker does, as logs show it.
	Name() string
	// Run works until ctx ends. It calls ready once what depends on it may begin (the next
	// worker, or the requests); returning counts as ready.
	Run(ctx context.Context, ready func())
}

// Group is workers started together.
type Group struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start starts each worker in turn, waiting for it to be ready before the next, and returns once
// the last is. The workers run until ctx ends or Stop is called.
func Start(ctx context.Context, log *slog.Logger, ws ...Worker) *Group {
	ctx, cancel := context.WithCancel(ctx)
	g := &Group{cancel: cancel}
	for _, w := range ws {
		ready := make(chan struct{})
		var once sync.Once
		g.wg.Go(func() {
			defer once.Do(func() { close(ready) })
			w.Run(ctx, func() { once.Do(func() { close(ready) }) })
		})
		<-ready
		if log != nil {
			log.Debug("worker started", "worker", w.Name())
		}
	}
	return g
}

// Stop ends every worker and waits until all have returned. Calling it again does nothing more.
func (g *Group) Stop() {
	g.cancel()
	g.wg.Wait()
}

// Loop is a worker named name that runs run until ctx ends, ready from its start.
func Loop(name string, run func(ctx context.Context)) Worker { return loop{name, run} }

type loop struct {
	name string
	run  func(ctx context.Context)
}

func (l loop) Name() string { return l.name }

func (l loop) Run(ctx context.Context, ready func()) {
	ready()
	l.run(ctx)
}
