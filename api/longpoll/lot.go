// Package longpoll holds long-polls without a goroutine each. Every host of a fleet holds a
// long-poll nearly all the time, and a request waiting in its handler keeps the server's two
// goroutines, their stacks and the connection's buffers: tens of kilobytes a host, most of a
// controller's memory at a fleet's size. A parked poll is its connection, taken over from the
// server, a timer and a bell: under a kilobyte.
//
// The contract. Park takes a request's connection over only when the request is Parkable
// (HTTP/1.1, nothing after its headers) and the writer can be hijacked; otherwise it touches
// nothing and returns false, and the handler answers the request as net/http would. A parked
// poll is answered when its bell rings with a generation past After, or when its wait ends, by
// Poll.Answer writing into a ResponseWriter as any handler does; the lot frames that answer as
// net/http's server frames it (status line, headers, Date, Content-Length except on a 304,
// Connection: close when the connection is not kept) and gives a kept-alive connection back to
// the server through Returns, whose next request is read as on any kept-alive connection. A
// client that pipelined a request behind the parked one gets its answer with Connection: close,
// and sends the rest again. Answers are composed on goroutines of the lot's own, at most
// answering at once and one at a time per key, each with a recover: a panic in an answer is
// logged, answered 500, and ends that answer only. HQ_LONGPOLL=handler leaves the lot empty
// and every poll waits in its handler: the standard path, for an operator ruling the lot out.
//
// A parked connection is watched for its client going away (watch_linux.go): one whose peer
// closed or reset it is closed and leaves the lot at once, rather than holding its file and
// its place among MaxPolls until its wait ends. And a key holds at most Poll.PerKey polls: a
// newer one replaces the oldest, which is answered at once with ErrReplaced.
package longpoll

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Lot holds parked long-polls.
type Lot struct {
	back *returns
	ctx  context.Context
	end  context.CancelFunc
	// slots bounds the answers composed at once: a new revision wakes the whole fleet. A slot
	// is held while an answer is composed, not while it is written, so a client that does not
	// read holds none.
	slots chan struct{}
	// turns lets one answer of a key be composed and written at a time: many polls of one
	// node, whose clients may never read, wait for each other and not for other nodes.
	turns map[string]*turn
	// Log, when set, receives a line for each answer written (as a request log would) and any
	// answer that panicked.
	Log *slog.Logger

	mu     sync.Mutex
	closed bool
	polls  map[*parked]struct{}
	// byKey lists each key's parked polls, oldest first, for Poll.PerKey.
	byKey map[string][]*parked
	// watch tells the lot of parked connections whose client went away; watched finds their
	// polls by the id the watch was given.
	watch   *watcher
	watched map[uint32]*parked
	nextID  uint32
	answers sync.WaitGroup
}

// ErrReplaced is the error Answer is given for a poll answered at once because a newer poll
// of its key took its place (Poll.PerKey).
var ErrReplaced = errors.New("replaced by a newer poll of the same key")

// turn is one node's right to answer, and how many answers of the node want it.
type turn struct {
	ch   chan struct{}
	refs int
}

// answerWriteTimeout bounds writing one answer. Only the node's own later answers wait for it.
const answerWriteTimeout = 15 * time.Second

// Poll is what the lot needs to know of one long-poll.
type Poll struct {
	// Key groups the polls answered one at a time (a node's).
	Key string
	// PerKey bounds the polls of Key parked at once (0: no bound): parking one more answers
	// the oldest at once, with ErrReplaced.
	PerKey int
	// After is the generation the client has: the poll is answered once it has moved past.
	After int64
	// Wait is how long the poll may wait.
	Wait time.Duration
	// Listen calls ring, once, when the generation may have moved, until stop is called; it
	// must not block, and ring must not be called from within Listen.
	Listen func(ring func()) (stop func())
	// Generation reads the generation now. The lot calls it first right after Listen, and
	// again after each ring.
	Generation func(ctx context.Context) (int64, error)
	// Answer writes the poll's answer into w as a handler would: gen is the generation read
	// (at most After when the wait ended with nothing new), err the error reading it. ctx ends
	// when the lot closes.
	Answer func(ctx context.Context, w http.ResponseWriter, gen int64, err error)
	// Ready, when set, is called before an answer with a generation past After is composed,
	// and may wait for the moment to answer (until ctx, which ends when the lot closes). It
	// holds none of the lot's slots, so other answers go on meanwhile.
	Ready func(ctx context.Context)
}

// parked is one waiting long-poll.
type parked struct {
	Poll
	conn net.Conn
	path string
	gen  int64 // the generation last read, at most After
	// reuse: the connection goes back to the server once answered (the client keeps it alive
	// and sent nothing more behind its request); otherwise it is closed.
	reuse   bool
	start   time.Time
	timer   *time.Timer
	stop    func() // stops listening for the node's bell
	expired bool   // the wait has passed: answer with what there is
	rang    bool   // the bell rang before the poll was in the lot
	// replaced: a newer poll of the key took its place; gone: its client went away while it
	// was out of the lot being answered. id is its watch's, 0 when not watched.
	replaced, gone bool
	id             uint32
}

// NewLot returns a lot for a server listening on addr. The server must also serve
// Returns(), where the answered connections come back. answering bounds the answers composed
// at once.
func NewLot(addr net.Addr, answering int) *Lot {
	ctx, end := context.WithCancel(context.Background())
	l := &Lot{back: newReturns(addr), ctx: ctx, end: end, slots: make(chan struct{}, answering),
		turns: map[string]*turn{}, polls: map[*parked]struct{}{}, byKey: map[string][]*parked{},
		watched: map[uint32]*parked{}}
	l.watch = newWatcher(l.peerGone, func(v any) {
		if l.Log != nil {
			l.Log.Error("watching parked long-polls panicked; they are no longer watched", "panic", v, "stack", string(debug.Stack()))
		}
	})
	return l
}

// Returns is the listener of connections coming back to the server once their poll is
// answered, so that the host's next request on one is read as on any kept-alive connection.
// Serve it beside the real listener; Close closes it.
func (l *Lot) Returns() net.Listener { return l.back }

// Parked is how many long-polls wait in the lot.
func (l *Lot) Parked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.polls)
}

// Close closes every parked connection (their hosts poll again, elsewhere or after the
// restart), ends the answers being written, waits for them and closes Returns.
func (l *Lot) Close() {
	l.mu.Lock()
	l.closed = true
	polls := l.polls
	l.polls = map[*parked]struct{}{}
	l.byKey = map[string][]*parked{}
	l.watched = map[uint32]*parked{}
	l.mu.Unlock()
	l.watch.close()
	l.end()
	l.back.Close() // before the wait: an answer giving its connection back is not held
	for p := range polls {
		p.timer.Stop()
		p.stop()
		p.conn.Close()
	}
	l.answers.Wait()
}

// Park takes the request's connection over and waits for the poll's generation to pass
// After, for at most Wait. It returns false, having touched nothing, when the request cannot
// be parked (not plain HTTP/1.1 without a body, a writer that cannot be taken over, a lot
// closing, a generation already newer): the handler then answers it itself.
func (l *Lot) Park(w http.ResponseWriter, r *http.Request, poll Poll) bool {
	hj, ok := w.(http.Hijacker)
	if !ok || !Parkable(r) {
		return false
	}
	p := &parked{Poll: poll, path: r.URL.Path, reuse: !r.Close, start: time.Now()}
	if l.isClosed() {
		return false
	}
	// Listen before reading the generation, so a change between the two rings the bell.
	p.stop = p.Listen(func() { l.wake(p, false) })
	gen, err := p.Generation(r.Context())
	if err != nil || gen > p.After {
		p.stop()
		return false
	}
	p.gen = gen
	conn, rw, err := hj.Hijack()
	if err != nil {
		p.stop()
		return false
	}
	// The server's deadlines were for the request it was reading; a parked poll has its own.
	conn.SetDeadline(time.Time{})
	p.conn = conn
	p.reuse = p.reuse && rw.Reader.Buffered() == 0
	p.timer = time.AfterFunc(p.Wait, func() { l.wake(p, true) })
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		p.timer.Stop()
		p.stop()
		conn.Close()
	case p.rang || p.expired:
		l.goAnswer(p) // the bell or the timer came while the poll was being parked
	default:
		l.nextID++
		if l.nextID == 0 {
			l.nextID++
		}
		if l.watch.add(conn, l.nextID) {
			p.id = l.nextID
			l.watched[p.id] = p
		}
		l.add(p)
	}
	return true
}

// add puts p in the lot, and answers at once the oldest poll of its key when the key would
// hold more than p.PerKey. l.mu is held.
func (l *Lot) add(p *parked) {
	if keyed := l.byKey[p.Key]; p.PerKey > 0 && len(keyed) >= p.PerKey {
		old := keyed[0]
		l.remove(old)
		old.replaced, old.expired = true, true
		l.goAnswer(old)
	}
	l.polls[p] = struct{}{}
	l.byKey[p.Key] = append(l.byKey[p.Key], p)
}

// remove takes p out of the lot. l.mu is held.
func (l *Lot) remove(p *parked) {
	delete(l.polls, p)
	keyed := l.byKey[p.Key]
	for i, q := range keyed {
		if q == p {
			keyed = append(keyed[:i], keyed[i+1:]...)
			break
		}
	}
	if len(keyed) == 0 {
		delete(l.byKey, p.Key)
	} else {
		l.byKey[p.Key] = keyed
	}
}

// forget stops watching p's connection: it leaves the lot for good. l.mu is held.
func (l *Lot) forget(p *parked) {
	if p.id != 0 {
		delete(l.watched, p.id)
		p.id = 0
	}
}

// peerGone is told by the watcher that the client of the poll watched as id went away. A
// parked poll is closed and leaves the lot; one being answered is closed once its answer is
// done with it.
func (l *Lot) peerGone(id uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.watched[id]
	if p == nil {
		return // answered meanwhile
	}
	l.forget(p)
	if _, ok := l.polls[p]; !ok {
		p.gone = true
		return
	}
	l.remove(p)
	p.timer.Stop()
	p.stop()
	p.conn.Close()
}

// Parkable reports whether a request may be parked: HTTP/1.1 with nothing after its headers.
// A parked connection goes back to the server for its next request, so a body, or one the
// client would send on a 100 Continue, would be read as that request; the handler path reads
// and discards it as net/http does. HTTP/1.0 keeps its connection only when it asks to, which
// net/http's answer handles.
func Parkable(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.ProtoMinor == 1 && r.ContentLength == 0 && len(r.TransferEncoding) == 0 &&
		len(r.Header.Values("Expect")) == 0 && len(r.Header.Values("Transfer-Encoding")) == 0
}

func (l *Lot) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// wake answers p when it is parked: its bell rang, or its wait passed (expire). One that is
// still being parked is marked, and answered as soon as it is.
func (l *Lot) wake(p *parked, expire bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if expire {
		p.expired = true
	}
	if _, ok := l.polls[p]; !ok {
		p.rang = true
		return // being parked, answered already or being answered, or the lot closed
	}
	l.remove(p)
	l.goAnswer(p)
}

// goAnswer answers p on a goroutine of its own, which Close waits for. l.mu is held. A panic
// in composing the answer is logged and answered 500, and ends only this answer.
func (l *Lot) goAnswer(p *parked) {
	l.answers.Add(1)
	go func() {
		defer l.answers.Done()
		defer func() {
			if v := recover(); v != nil {
				l.panicked(p, v)
			}
		}()
		l.answer(p)
	}()
}

// panicked answers p 500 after a panic in its answer, and closes its connection.
func (l *Lot) panicked(p *parked, v any) {
	if l.Log != nil {
		l.Log.Error("answering a long-poll panicked", "key", p.Key, "panic", v, "stack", string(debug.Stack()))
	}
	p.timer.Stop()
	p.stop()
	l.done(p)
	w := &answerWriter{header: http.Header{}}
	w.header.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	w.body.WriteString(`{"error":{"code":"internal","message":"internal error"}}` + "\n")
	p.conn.SetWriteDeadline(time.Now().Add(time.Second))
	p.conn.Write(w.response(false))
	p.conn.Close()
}

// takeTurn waits for node's turn to answer; false when the lot is closing.
func (l *Lot) takeTurn(node string) (*turn, bool) {
	l.mu.Lock()
	t := l.turns[node]
	if t == nil {
		t = &turn{ch: make(chan struct{}, 1)}
		l.turns[node] = t
	}
	t.refs++
	l.mu.Unlock()
	select {
	case t.ch <- struct{}{}:
		return t, true
	case <-l.ctx.Done():
		l.leaveTurn(node, t, false)
		return nil, false
	}
}

// leaveTurn gives node's turn back (held: it was taken) and forgets it when no answer wants it.
func (l *Lot) leaveTurn(node string, t *turn, held bool) {
	if held {
		<-t.ch
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.refs--; t.refs == 0 {
		delete(l.turns, node)
	}
}

// answer writes p's answer, or parks it again when its bell rang for nothing new (every bell
// rings after a lost listen connection, for one).
func (l *Lot) answer(p *parked) {
	t, ok := l.takeTurn(p.Key)
	if !ok {
		p.timer.Stop()
		p.stop()
		l.done(p)
		p.conn.Close()
		return
	}
	defer l.leaveTurn(p.Key, t, true)
	for {
		gen, over := l.state(p)
		var err error
		if !over {
			// Rung: read what the generation is now. Expired, the poll is answered with the one
			// last read, as its bell did not ring since.
			gen, err = p.Generation(l.ctx)
		}
		if err == nil && gen <= p.After {
			switch l.repark(p, gen) {
			case lotClosing:
				return
			case parkedAgain:
				// Listening again: a change since the read above rang the bell, or is seen now.
				if gen, err = p.Generation(l.ctx); err == nil && gen <= p.After {
					l.saw(p, gen)
					return
				}
				if !l.claim(p) {
					return // the bell or the timer has it
				}
				continue
			}
		}
		p.timer.Stop()
		p.stop()
		if err == nil && gen > p.After && p.Ready != nil {
			p.Ready(l.ctx)
		}
		l.respond(p, gen, err)
		return
	}
}

type reparked int

const (
	parkedAgain reparked = iota
	waitOver             // the wait has passed: answer with what there is
	lotClosing           // the lot is closing, or the client went away: the connection was closed
)

// repark puts p back in the lot, listening for its bell, unless its wait has passed or the
// lot is closing; gen is the generation just read.
func (l *Lot) repark(p *parked, gen int64) reparked {
	l.mu.Lock()
	defer l.mu.Unlock()
	p.gen = max(p.gen, gen)
	switch {
	case l.closed || p.gone:
		p.timer.Stop()
		if p.gone {
			p.stop() // its wait may have ended with its bell still listening
		}
		l.forget(p)
		p.conn.Close()
		return lotClosing
	case p.expired:
		return waitOver
	}
	p.stop = p.Listen(func() { l.wake(p, false) })
	l.add(p)
	return parkedAgain
}

// state returns the generation last read for p, and whether its wait has passed.
func (l *Lot) state(p *parked) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return p.gen, p.expired
}

// saw records a generation read for p while it is parked (and may be claimed at once).
func (l *Lot) saw(p *parked, gen int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p.gen = max(p.gen, gen)
}

// claim takes p out of the lot for its answer, unless a bell or its timer took it first.
func (l *Lot) claim(p *parked) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.polls[p]; !ok {
		return false
	}
	l.remove(p)
	return true
}

// respond writes the poll's answer on its connection, as the handler would have (the same
// functions fill it in), and gives the connection back to the server or closes it.
func (l *Lot) respond(p *parked, gen int64, err error) {
	if l.done(p) {
		p.conn.Close() // its client went away while it was being answered
		return
	}
	if p.replaced && err == nil {
		err = ErrReplaced
	}
	if err != nil && l.ctx.Err() != nil {
		p.conn.Close() // the controller is shutting down: no one to answer
		return
	}
	w, ok := l.compose(p, gen, err)
	if !ok {
		p.conn.Close()
		return
	}
	p.conn.SetWriteDeadline(time.Now().Add(answerWriteTimeout))
	_, werr := p.conn.Write(w.response(p.reuse))
	if w.status != http.StatusNotModified && l.Log != nil {
		l.Log.Info("http", "method", http.MethodGet, "path", p.path, "status", w.status, "took", time.Since(p.start))
	}
	p.conn.SetWriteDeadline(time.Time{})
	if werr != nil || !p.reuse || !l.back.give(p.conn) {
		p.conn.Close()
	}
}

// done stops watching p's connection, which leaves the lot for good, and reports whether its
// client went away meanwhile.
func (l *Lot) done(p *parked) bool {
	l.mu.Lock()
	id, gone := p.id, p.gone
	l.forget(p)
	l.mu.Unlock()
	if id != 0 {
		l.watch.drop(p.conn)
	}
	return gone
}

// compose fills in p's answer holding one of the lot's slots; false when the lot is closing.
func (l *Lot) compose(p *parked, gen int64, err error) (*answerWriter, bool) {
	select {
	case l.slots <- struct{}{}:
		defer func() { <-l.slots }()
	case <-l.ctx.Done():
		return nil, false
	}
	w := &answerWriter{header: http.Header{}}
	p.Answer(l.ctx, w, gen, err)
	return w, true
}

// answerWriter collects a handler's answer to write it on a connection taken from the server.
type answerWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *answerWriter) Header() http.Header { return w.header }

func (w *answerWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *answerWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// response is the answer as HTTP/1.1 puts it on the wire, framed as net/http's server frames
// it: no Content-Length on a 304 (http.Response.Write would send one).
func (w *answerWriter) response(keepAlive bool) []byte {
	w.WriteHeader(http.StatusOK)
	h := w.header
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	if w.status != http.StatusNotModified {
		h.Set("Content-Length", strconv.Itoa(w.body.Len()))
	}
	if !keepAlive {
		h.Set("Connection", "close")
	}
	var out bytes.Buffer
	out.Grow(w.body.Len() + 256)
	fmt.Fprintf(&out, "HTTP/1.1 %d %s\r\n", w.status, http.StatusText(w.status))
	h.Write(&out)
	out.WriteString("\r\n")
	if w.status != http.StatusNotModified {
		out.Write(w.body.Bytes())
	}
	return out.Bytes()
}

// returns is a listener of the connections the lot gives back to the server.
type returns struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newReturns(addr net.Addr) *returns {
	return &returns{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// give hands c to the server; false when the listener is closed.
func (j *returns) give(c net.Conn) bool {
	select {
	case j.conns <- c:
		return true
	case <-j.done:
		return false
	}
}

func (j *returns) Accept() (net.Conn, error) {
	select {
	case c := <-j.conns:
		return c, nil
	case <-j.done:
		return nil, net.ErrClosed
	}
}

func (j *returns) Close() error {
	j.once.Do(func() { close(j.done) })
	return nil
}

func (j *returns) Addr() net.Addr { return j.addr }
