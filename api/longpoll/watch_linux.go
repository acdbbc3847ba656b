package longpoll

import (
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// watcher watches parked connections for their clients going away, with one epoll set and one
// goroutine for the whole lot: a parked poll keeps no goroutine of its own, and a goroutine
// reading each would cost more than the poll. A connection is registered for one event
// (EPOLLONESHOT): its peer closing or resetting it (EPOLLRDHUP, EPOLLHUP, EPOLLERR). Bytes
// arriving are no event (EPOLLIN is not asked for): a client pipelining is still there, and a
// TLS client sends its close alert before it closes. The registration carries the poll's id,
// never its file descriptor's number, so an event for a poll already answered finds nothing.
// A connection closed leaves the set by itself; one given back to the server is dropped first.
type watcher struct {
	epfd  int
	wakeR int // the read end of a pipe in the set: written to stop the loop
	wakeW int
	gone  func(id uint32)
	// panicked is told of a panic that ended the loop.
	panicked func(v any)
	mu       sync.Mutex
	closed   bool
	done     chan struct{}
}

// newWatcher starts the watching goroutine; gone is called on it for each event, and panicked
// with a panic that ended it. A watcher
// that cannot be made (no epoll) watches nothing: parked polls then hold their connections
// until their wait ends, as they did before.
func newWatcher(gone func(id uint32), panicked func(v any)) *watcher {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		unix.Close(epfd)
		return nil
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, p[0], &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
		unix.Close(epfd)
		unix.Close(p[0])
		unix.Close(p[1])
		return nil
	}
	w := &watcher{epfd: epfd, wakeR: p[0], wakeW: p[1], gone: gone, panicked: panicked, done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *watcher) loop() {
	defer close(w.done)
	// A panic in gone ends the watching, never the controller: parked polls then hold their
	// connections until their wait ends, as with no watcher.
	defer func() {
		if v := recover(); v != nil && w.panicked != nil {
			w.panicked(v)
		}
	}()
	events := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			id := uint32(ev.Fd)
			if id == 0 {
				return // the pipe: the lot is closing
			}
			w.gone(id)
		}
	}
}

// add watches c as id (never 0); false when it cannot be watched (not a socket, or the
// watcher closed).
func (w *watcher) add(c net.Conn, id uint32) bool {
	if w == nil {
		return false
	}
	rc := rawConn(c)
	if rc == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	var err error
	cerr := rc.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(id)}
		err = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev)
	})
	return cerr == nil && err == nil
}

// drop stops watching c, which goes on serving. Control does nothing on a closed connection,
// whose descriptor's number may already be another's.
func (w *watcher) drop(c net.Conn) {
	if w == nil {
		return
	}
	rc := rawConn(c)
	if rc == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	rc.Control(func(fd uintptr) { unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(fd), nil) })
}

// close stops the goroutine and waits for it.
func (w *watcher) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	unix.Write(w.wakeW, []byte{0})
	<-w.done
	unix.Close(w.epfd)
	unix.Close(w.wakeR)
	unix.Close(w.wakeW)
}

// rawConn finds the socket under c, through the TLS and the limits wrapped around it.
func rawConn(c net.Conn) syscall.RawConn {
	for range 8 {
		switch v := c.(type) {
		case syscall.Conn:
			rc, err := v.SyscallConn()
			if err != nil {
				return nil
			}
			return rc
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}
