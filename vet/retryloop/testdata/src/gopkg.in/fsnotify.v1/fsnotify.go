// Package fsnotify is a stand-in for gopkg.in/fsnotify.v1, fsnotify under
// the import path of its first releases.
package fsnotify

// Op is what happened to a path.
type Op uint32

// Create is a path made.
const Create Op = 1

// Event is a change to a watched path.
type Event struct {
	Name string
	Op   Op
}

// Watcher watches paths on this machine.
type Watcher struct {
	Events chan Event
	Errors chan error
}

// NewWatcher returns a watcher.
func NewWatcher() (*Watcher, error) { return &Watcher{}, nil }

// Add starts watching path.
func (w *Watcher) Add(path string) error { return nil }

// Close stops the watcher.
func (w *Watcher) Close() error { return nil }
