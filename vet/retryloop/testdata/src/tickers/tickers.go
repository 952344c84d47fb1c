// Package tickers holds, written anew, loops paced by a ticker made before
// them: a retry on every tick is a retry on a constant interval.
package tickers

import (
	"database/sql"
	"errors"
	"log"
	"net/http"
	"time"
)

// OpenConn tries a database connection on every tick until it opens and
// answers, or the timeout passes.
//
// case: flag nojitter
func OpenConn(driver, dsn string, interval, timeout time.Duration) (*sql.DB, error) { // want OpenConn:`waits=true`
	ticker := time.NewTicker(interval) // want `nojitter: the ticker in a retry loop has a constant or purely exponential duration whatever its caller passes`
	defer ticker.Stop()
	deadline := time.After(timeout)
	for {
		select {
		case <-ticker.C:
			db, err := sql.Open(driver, dsn)
			if err != nil {
				log.Printf("open: %v", err)
				continue
			}
			if err := db.Ping(); err != nil {
				log.Printf("ping: %v", err)
				continue
			}
			return db, nil
		case <-deadline:
			return nil, errors.New("timed out waiting for the database")
		}
	}
}

// A registration sent on every tick of time.Tick until it is accepted:
// every error and every refusal goes round, Retry-After unread.
//
// case: flag nojitter unclassified retryafter
func register(hc *http.Client, url string) error {
	tick := time.Tick(2 * time.Second) // want `nojitter: the ticker in a retry loop` `retryafter: retry loop retries 429 and 503`
	for try := 0; try < 10; try++ {    // want `unclassified: retry loop around Client.Post`
		<-tick
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode < 300 {
			return nil
		}
	}
	return errors.New("not registered")
}

// A reporter that sends on every tick whatever the last send did: a
// period, not a retry.
//
// case: clean
func report(hc *http.Client, url string, stop <-chan struct{}) {
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
			resp, err := hc.Post(url, "application/json", nil)
			if err != nil {
				log.Printf("report: %v", err)
				continue
			}
			resp.Body.Close()
		}
	}
}

// A readiness poll on a ticker: a "not yet" answer goes round, a failure
// or the ready answer leaves.
//
// case: clean
func awaitReady(hc *http.Client, url string, stop <-chan struct{}) bool {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return false
		case <-ticker.C:
			resp, err := hc.Get(url)
			if err != nil {
				return false
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return false
			}
			if resp.Header.Get("Ready") == "yes" {
				return true
			}
		}
	}
}
