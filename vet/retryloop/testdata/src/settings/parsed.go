package settings

import (
	"math/rand"
	"net"
	"net/url"
	"strconv"
	"time"
)

// discover resolves its peers, waiting the interval the URL's query gives
// (or a second) after each failed lookup: a setting parsed from text, the
// same on every node of a cluster that boots together.
//
// case: flag nojitter unbounded
func discover(u *url.URL) []string {
	interval, err := strconv.Atoi(u.Query().Get("interval_ms"))
	if err != nil {
		interval = 1000
	}
	for { // want `unbounded: retry loop has no bound`
		addrs, err := net.LookupHost(u.Hostname())
		if err != nil {
			time.Sleep(time.Duration(interval) * time.Millisecond) // want `nojitter: this wait in a retry loop`
			continue
		}
		return addrs
	}
}

// discoverSpread parses the same interval and waits a random part of it:
// the nodes spread out.
//
// case: clean
func discoverSpread(u *url.URL) []string {
	interval, err := strconv.Atoi(u.Query().Get("interval_ms"))
	if err != nil {
		interval = 1000
	}
	for try := 0; try < 10; try++ {
		addrs, err := net.LookupHost(u.Hostname())
		if err == nil {
			return addrs
		}
		time.Sleep(time.Duration(rand.Int63n(int64(interval)+1)) * time.Millisecond)
	}
	return nil
}
