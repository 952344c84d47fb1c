// want package:"offline"

// Package offlinedb holds, written anew, an embedded database engine that
// cannot reach the network: nothing it or its imports do talks to another
// machine. Its retries of a manifest write are retries of this machine's
// work; a retry of what a caller hands it, or of a stand-in that shows no
// work of its own, is judged as ever.
package offlinedb

import (
	"errors"
	"time"

	"example.com/kvstore"
)

// DB is the engine.
type DB struct {
	stor   kvstore.Storage
	closed chan struct{}
}

// writeManifest writes the engine's manifest through its storage.
func (db *DB) writeManifest(rec []byte) error {
	f, err := db.stor.Create("MANIFEST")
	if err != nil {
		return err
	}
	if _, err := f.Write(rec); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// commit writes the manifest again after a second, three times at most:
// a retry of a write to this machine's disk.
//
// case: clean
func (db *DB) commit(rec []byte) error {
	var err error
	for retry := 0; retry < 3; retry++ {
		if err = db.writeManifest(rec); err == nil {
			return nil
		}
		select {
		case <-time.After(time.Second):
		case <-db.closed:
			return err
		}
	}
	return err
}

// retry runs what the caller hands it again after a constant pause: the
// caller's operation may be anybody's.
//
// case: flag nojitter
func retry(op func() error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = op(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
	return err
}

var errBusy = errors.New("busy")

// request stands for work the reader cannot see.
func request() error { return errBusy }

// send retries a call that shows no work of its own.
//
// case: flag nojitter
func send() error {
	var err error
	for i := 0; i < 3; i++ {
		if err = request(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
	return err
}
