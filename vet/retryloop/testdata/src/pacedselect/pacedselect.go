// Package pacedselect holds, written anew, periodic syncs whose round
// ends in a select that waits the sync's interval or stops, and whose
// failed pull sleeps that same interval before the next round.
package pacedselect

import (
	"net/http"
	"time"
)

// Syncer pulls a quota table every interval.
type Syncer struct {
	hc   *http.Client
	url  string
	stop chan struct{}
	kick chan struct{}
}

// syncEvery is the sync's interval.
const syncEvery = 30 * time.Second

// pull fetches the table once.
func (s *Syncer) pull() error {
	resp, err := s.hc.Get(s.url)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// run pulls every syncEvery until stopped; a failed pull waits the same
// interval: its failures are paced like its answers.
//
// case: clean
func (s *Syncer) run() {
	for {
		if err := s.pull(); err != nil {
			time.Sleep(syncEvery)
			continue
		}
		select {
		case <-time.After(syncEvery):
		case <-s.stop:
			return
		}
	}
}

// runKicked is run whose round can also be cut short by a kick: the
// interval is not the round's only pace, so a failure's sleep is a wait
// of its own.
//
// case: flag nojitter unbounded
func (s *Syncer) runKicked() {
	for { // want `unbounded: retry loop has no bound`
		if err := s.pull(); err != nil {
			time.Sleep(syncEvery) // want `nojitter: this wait in a retry loop`
			continue
		}
		select {
		case <-time.After(syncEvery):
		case <-s.kick:
		case <-s.stop:
			return
		}
	}
}
