// Package onlinedb holds, written anew, the twin of offlinedb's engine
// in a package that can reach the network: its manifest write goes
// through the same storage, and its package also dials, so the write
// cannot be told from a remote one.
package onlinedb

import (
	"net"
	"time"

	"example.com/kvstore"
)

// DB is the engine, with a peer it replicates to.
type DB struct {
	stor   kvstore.Storage
	peer   string
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

// commit is offlinedb's commit in a package that dials.
//
// case: flag nojitter
func (db *DB) commit(rec []byte) error {
	var err error
	for retry := 0; retry < 3; retry++ {
		if err = db.writeManifest(rec); err == nil {
			return nil
		}
		select {
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
		case <-db.closed:
			return err
		}
	}
	return err
}

// replicate sends the record to the peer.
func (db *DB) replicate(rec []byte) error {
	conn, err := net.Dial("tcp", db.peer)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write(rec)
	return err
}
