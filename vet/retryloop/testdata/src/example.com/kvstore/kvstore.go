// Package kvstore stands in for a storage engine's file layer: an
// interface its engine writes through, and the implementation on this
// machine's disk that it ships.
package kvstore

import "os"

// Storage is where an engine keeps its files.
type Storage interface {
	Create(name string) (*os.File, error)
	Remove(name string) error
}

// Dir keeps files in one directory of this machine.
type Dir string

// Create creates the named file in the directory.
func (d Dir) Create(name string) (*os.File, error) { return os.Create(string(d) + "/" + name) }

// Remove removes the named file from the directory.
func (d Dir) Remove(name string) error { return os.Remove(string(d) + "/" + name) }
