// Package watchadd holds, written anew, a retry of adding a file watch
// (an inotify call on this machine: nothing shared to spread out) beside
// a retry of a remote call with the same constant pause.
package watchadd

import (
	"net/http"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDir adds a directory to the watch, trying again every 500 ms while
// a checkout settles its symlinks.
//
// case: clean
func watchDir(w *fsnotify.Watcher, dir string) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = w.Add(dir); err == nil {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return err
}

// fetch asks a server for the directory listing with the same pause: every
// client that failed together asks again together.
//
// case: flag nojitter
func fetch(c *http.Client, url string) (*http.Response, error) {
	var err error
	for i := 0; i < 5; i++ {
		var resp *http.Response
		if resp, err = c.Get(url); err == nil {
			return resp, nil
		}
		time.Sleep(500 * time.Millisecond) // want `nojitter`
	}
	return nil, err
}
