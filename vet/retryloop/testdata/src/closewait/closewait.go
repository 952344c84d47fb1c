// Package closewait holds, written anew, reconnect loops that block until
// the connection they opened says it closed, then wait before dialling
// again: the wait after that receive paces reconnects, a retry's wait.
package closewait

import (
	"log"
	"math/rand/v2"
	"time"

	"example.com/mq"
)

type transport struct {
	urls    []string
	stopped bool
}

// connect dials url and hands back the channel its close comes on.
func (t *transport) connect(url string) (chan *mq.Error, error) {
	conn, err := mq.Dial(url)
	if err != nil {
		return nil, err
	}
	return conn.NotifyClose(make(chan *mq.Error, 1)), nil
}

// Each broker in turn; after a failed dial or a lost connection, a
// constant five seconds, for ever.
//
// case: flag nojitter unbounded
func (t *transport) run() {
	for n := 0; ; n++ { // want `unbounded: retry loop has no bound`
		closed, err := t.connect(t.urls[n%len(t.urls)])
		if err != nil {
			log.Print(err)
		} else {
			err = <-closed
			log.Print("connection closed: ", err)
		}
		time.Sleep(5 * time.Second) // want `nojitter: this wait in a retry loop has a constant`
	}
}

// The same, the close read from the connection itself, a random pause,
// and a stop.
//
// case: clean
func (t *transport) runJittered() {
	for !t.stopped {
		conn, err := mq.Dial(t.urls[0])
		if err == nil {
			<-conn.NotifyClose(make(chan *mq.Error, 1))
		}
		time.Sleep(rand.N(5 * time.Second))
	}
}

// The close read from the connection's done channel; a constant pause
// until stopped.
//
// case: flag nojitter
func (t *transport) runUntilStopped() {
	for !t.stopped {
		conn, err := mq.Dial(t.urls[0])
		if err == nil {
			<-conn.Closed()
			conn.Close()
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop has a constant`
	}
}

// One delivery a round, at the consumer's own pace: a message received
// is a success, and the pause after it the poll's.
//
// case: clean
func (t *transport) sample(handle func([]byte)) {
	conn, err := mq.Dial(t.urls[0])
	if err != nil {
		return
	}
	defer conn.Close()
	for !t.stopped {
		handle(<-conn.Deliveries())
		time.Sleep(time.Second)
	}
}
