package guesses

import (
	"fmt"
	"testing"
	"time"
)

// An address may fail its burst at once, and is then blocked until its bucket refills; other
// addresses are not.
func TestAnAddressIsBlockedPastItsBurst(t *testing.T) {
	l := New(3)
	for i := range 3 {
		if blocked, _ := l.Blocked("10.0.0.1"); blocked {
			t.Fatalf("blocked after %d failures of 3", i)
		}
		l.Failed("10.0.0.1")
	}
	blocked, after := l.Blocked("10.0.0.1")
	if !blocked || after <= 0 || after > 20*time.Second {
		t.Fatalf("after 3 failures of 3 a minute: blocked %v for %s, want blocked for up to 20 s", blocked, after)
	}
	if blocked, _ := l.Blocked("10.0.0.2"); blocked {
		t.Fatal("another address is blocked")
	}
	if l.Refused() != 1 {
		t.Fatalf("%d refused", l.Refused())
	}
	// Its bucket refills: a failure a second here.
	fast := New(60)
	for range 60 {
		fast.Failed("10.0.0.1")
	}
	if blocked, _ := fast.Blocked("10.0.0.1"); !blocked {
		t.Fatal("not blocked after its burst")
	}
	deadline := time.Now().Add(3 * time.Second)
	for blocked, _ := fast.Blocked("10.0.0.1"); blocked; blocked, _ = fast.Blocked("10.0.0.1") {
		if time.Now().After(deadline) {
			t.Fatal("still blocked 3 s later, at a failure a second")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The limiter remembers at most max addresses, however many fail: a flood from many
// addresses costs it a bounded map.
func TestTheLimiterRemembersBoundedAddresses(t *testing.T) {
	l := New(3)
	l.max = 100
	for i := range 1000 {
		l.Failed(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
	}
	if n := len(l.addrs); n > 100 {
		t.Fatalf("%d addresses remembered, want at most 100", n)
	}
	// The latest is remembered.
	for range 3 {
		l.Failed("10.9.9.9")
	}
	if blocked, _ := l.Blocked("10.9.9.9"); !blocked {
		t.Fatal("the address that failed last is not blocked")
	}
}

// Without a bound, nothing is counted or blocked.
func TestNoBound(t *testing.T) {
	l := New(0)
	for range 100 {
		l.Failed("10.0.0.1")
	}
	if blocked, _ := l.Blocked("10.0.0.1"); blocked {
		t.Fatal("blocked with no bound")
	}
}
