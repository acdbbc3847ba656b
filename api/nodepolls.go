package api

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/meshhq/hq/api/longpoll"
)

// DefaultPollsPerNode is how many long-polls of one node wait at once, in the lot and in
// handlers each: a host holds one, and one more covers a connection that died without the
// controller seeing it close. Past it the newest poll takes the oldest's place, and the oldest
// is answered at once: one node's token cannot take the controller's connections.
const DefaultPollsPerNode = 2

func (s *Server) pollsPerNode() int {
	if s.PollsPerNode > 0 {
		return s.PollsPerNode
	}
	return DefaultPollsPerNode
}

// handlerPolls holds, for each node, the ends of its polls waiting in their handlers, oldest
// first.
type handlerPolls struct {
	mu sync.Mutex
	m  map[string][]*context.CancelCauseFunc
}

// hold counts a poll of node waiting in its handler, ended by end; past per, the oldest is
// ended with longpoll.ErrReplaced. release forgets it.
func (h *handlerPolls) hold(node string, per int, end context.CancelCauseFunc) (release func()) {
	e := &end
	h.mu.Lock()
	if h.m == nil {
		h.m = map[string][]*context.CancelCauseFunc{}
	}
	held := h.m[node]
	var oldest *context.CancelCauseFunc
	if len(held) >= per {
		oldest, held = held[0], held[1:]
	}
	h.m[node] = append(held, e)
	h.mu.Unlock()
	if oldest != nil {
		(*oldest)(longpoll.ErrReplaced)
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		held := h.m[node]
		for i, x := range held {
			if x == e {
				held = append(held[:i:i], held[i+1:]...)
				break
			}
		}
		if len(held) == 0 {
			delete(h.m, node)
		} else {
			h.m[node] = held
		}
	}
}

// replaced answers a poll a newer one of its node took the place of: 304 with the generation
// read, and Retry-After, so a host that still holds it (two hosts given one node's token)
// polls on its interval rather than taking the newer one's place at once.
func (s *Server) replaced(w http.ResponseWriter, gen int64) {
	w.Header().Set("Retry-After", strconv.Itoa(int(deferredPollRetry.Seconds())))
	setETag(w, gen)
	w.WriteHeader(http.StatusNotModified)
}
