package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq/api/longpoll"
)

// Waiting is how many long-polls wait now: in the lot, and in their handlers (those the lot
// could not take, or all of them without a lot).
func (s *Server) Waiting() int {
	n := int(s.inHandler.Load())
	if s.Lot != nil {
		n += s.Lot.Parked()
	}
	return n
}

// park hands a node's long-poll to the lot; false when the lot would not take it, and the
// handler answers it.
func (s *Server) park(w http.ResponseWriter, r *http.Request, node string, after int64, wait time.Duration) bool {
	c, _ := r.Context().Value(callerKey).(caller)
	path := r.URL.Path
	start := time.Now()
	var read atomic.Bool
	return s.Lot.Park(w, r, longpoll.Poll{
		Key: node, PerKey: s.pollsPerNode(), After: after, Wait: wait,
		Listen: func(ring func()) func() { return s.Store.OnGeneration(node, ring) },
		Generation: func(ctx context.Context) (int64, error) {
			// The first read comes right after the poll listened: the read that checked the
			// node's token serves, unless a bell rang since.
			if read.CompareAndSwap(false, true) {
				if gen, ok := s.Store.GenerationSince(c.check); ok {
					return gen, nil
				}
			}
			return s.Store.NodeGeneration(ctx, node)
		},
		Ready: func(ctx context.Context) { s.paced(ctx, start, wait) },
		// Answered as the handler answers it, by the same functions, for the same caller.
		Answer: func(ctx context.Context, w http.ResponseWriter, gen int64, err error) {
			ctx = context.WithValue(ctx, callerKey, caller{node: node, operator: c.operator})
			r := (&http.Request{Method: http.MethodGet, URL: &url.URL{Path: path}, Header: http.Header{}}).WithContext(ctx)
			switch {
			case errors.Is(err, longpoll.ErrReplaced):
				s.replaced(w, gen)
			case err != nil:
				s.writeError(w, r, err)
			case gen <= after:
				setETag(w, gen)
				w.WriteHeader(http.StatusNotModified)
			default:
				s.answerDeclaration(w, r, node)
			}
		},
	})
}
