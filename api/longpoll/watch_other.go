//go:build !linux

package longpoll

import "net"

// watcher watches nothing off Linux: a parked poll whose client went away holds its
// connection until its wait ends.
type watcher struct{}

func newWatcher(func(id uint32), func(v any)) *watcher { return nil }
func (w *watcher) add(net.Conn, uint32) bool           { return false }
func (w *watcher) drop(net.Conn)                       {}
func (w *watcher) close()                              {}
