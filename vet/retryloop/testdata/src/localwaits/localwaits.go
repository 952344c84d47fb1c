// Package localwaits holds, written anew, a loop that waits for files to
// appear in a local directory, through a helper that waits for each
// parent directory first by calling itself, and watches under fsnotify's
// first import path; beside it, the same loop over a download.
package localwaits

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/fsnotify.v1"
)

// present waits until name exists, its parent first.
func present(ctx context.Context, name string) error {
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	dir := filepath.Dir(name)
	if dir != name {
		if err := present(ctx, dir); err != nil {
			return err
		}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-w.Events:
			if ev.Op&fsnotify.Create != 0 && ev.Name == name {
				return nil
			}
		case err := <-w.Errors:
			return err
		}
	}
}

type follower struct {
	dir  string
	hc   *http.Client
	base string
	out  chan string
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// follow hands on each numbered file as it appears; a failed watch is
// tried again a minute later. Nothing leaves the machine.
//
// case: clean
func (f *follower) follow(ctx context.Context) {
	for n := 1; ctx.Err() == nil; {
		name := filepath.Join(f.dir, time.Duration(n).String())
		if err := present(ctx, name); err != nil {
			pause(ctx, time.Minute)
			continue
		}
		f.out <- name
		n++
	}
}

func (f *follower) fetch(ctx context.Context, name string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/"+name, nil)
	if err != nil {
		return err
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// download is follow's twin over a server: every follower that failed
// together asks again together, a minute later, a 404 and a 429 alike.
//
// case: flag unclassified nojitter retryafter
func (f *follower) download(ctx context.Context) {
	for n := 1; ctx.Err() == nil; { // want `unclassified: retry loop around follower.fetch retries on every error`
		name := time.Duration(n).String()
		if err := f.fetch(ctx, name); err != nil {
			pause(ctx, time.Minute) // want `nojitter: pause in a retry loop` `retryafter: retry loop retries 429 and 503`
			continue
		}
		f.out <- name
		n++
	}
}
