package exits

import (
	"database/sql"
	"time"
)

// openDB opens the database, and on failure waits five seconds and calls
// itself again with the same arguments: nothing counts, nothing stops it.
//
// case: flag nojitter unbounded
func openDB(dsn string, retry bool) (*sql.DB, error) {
	db, err := sql.Open("postgres", dsn)
	if err == nil {
		err = db.Ping()
	}
	if err != nil {
		if retry {
			time.Sleep(5 * time.Second) // want `nojitter: this wait in a retry loop`
			return openDB(dsn, retry)   // want `unbounded: retry by recursion has no bound`
		}
		return nil, err
	}
	return db, nil
}

// openDBCounted hands down a count that runs out.
//
// case: flag nojitter
func openDBCounted(dsn string, tries int) (*sql.DB, error) {
	db, err := sql.Open("postgres", dsn)
	if err == nil {
		err = db.Ping()
	}
	if err != nil && tries > 1 {
		time.Sleep(5 * time.Second) // want `nojitter: this wait in a retry loop`
		return openDBCounted(dsn, tries-1)
	}
	return db, err
}
