// Package innerwait holds, written anew, loops that retry a call which
// waits inside itself (a connect that pauses for the handshake to settle)
// while the loop waits a time of its own: the loop's own wait is the
// retry's schedule.
package innerwait

import (
	"errors"
	"math/rand"
	"net"
	"time"
)

// link is a connection to one of a cluster's brokers.
type link struct {
	addr string
	conn net.Conn
}

// open dials the broker and gives the handshake a constant moment to
// settle before the link is used.
func (l *link) open() error {
	conn, err := net.Dial("tcp", l.addr)
	if err != nil {
		return err
	}
	time.Sleep(50 * time.Millisecond)
	l.conn = conn
	return nil
}

var errGaveUp = errors.New("no broker answered")

// The loop's own wait is random; the constant pause inside open is part
// of the attempt, not the schedule between attempts.
//
// case: clean
func connectAny(addrs []string) (*link, error) {
	l := &link{addr: addrs[0]}
	err := l.open()
	for tries := 1; err != nil && tries <= 10; tries++ {
		time.Sleep(time.Duration(rand.Intn(3000)+tries*1000) * time.Millisecond)
		l = &link{addr: addrs[rand.Intn(len(addrs))]}
		err = l.open()
	}
	return l, err
}

// The same loop with a constant wait of its own: every client that lost
// the broker together comes back together. The finding is on that wait;
// open's pause is part of the attempt here too.
//
// case: flag nojitter
func connectAnyConstant(addrs []string) (*link, error) {
	l := &link{addr: addrs[0]}
	err := l.open()
	for tries := 1; err != nil && tries <= 10; tries++ {
		time.Sleep(time.Duration(tries) * time.Second) // want `nojitter: this wait in a retry loop`
		l = &link{addr: addrs[tries%len(addrs)]}
		err = l.open() // the pause inside is the attempt's: only the loop's own wait is reported
	}
	return l, err
}

// The loop has no wait of its own: open's constant pause is all that
// spaces the attempts.
//
// case: flag nojitter
func connectAnyNoWait(addrs []string) (*link, error) {
	l := &link{addr: addrs[0]}
	err := l.open()
	for tries := 1; err != nil && tries <= 10; tries++ {
		l = &link{addr: addrs[tries%len(addrs)]}
		err = l.open() // want `nojitter: open in a retry loop`
	}
	if err != nil {
		return nil, errGaveUp
	}
	return l, nil
}
