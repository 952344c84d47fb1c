// Package hotretry holds retry loops with no wait at all: a request
// re-sent at once on a failure, as fast as the dependency answers.
package hotretry

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"

	"example.com/ratelimit"
)

// linker renews a signed download link.
type linker interface {
	NewLink() (string, error)
}

// fetch downloads a file, going back at once on a temporary network error
// or, after renewing the link, on a 403; nothing counts the tries.
//
// case: flag unbounded
func fetch(hc *http.Client, f *os.File, url string, l linker) error {
	var err error
retry: // want `unbounded: retry loop has no bound`
	_, err = f.Seek(0, io.SeekStart)
	if err != nil {
		return err
	}
	resp, err := hc.Get(url)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			goto retry
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		url, err = l.NewLink()
		if err != nil {
			return err
		}
		goto retry
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	_, err = io.Copy(f, resp.Body)
	return err
}

// fetchCounted is fetch's twin that gives up after three timeouts.
//
// case: clean
func fetchCounted(hc *http.Client, url string) (*http.Response, error) {
	tries := 0
retry:
	resp, err := hc.Get(url)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && tries < 3 {
			tries++
			goto retry
		}
		return nil, err
	}
	return resp, nil
}

// fetchAllowed is fetch's twin that asks a limiter before each try: its
// refusal is a verdict out of sight that may count.
//
// case: clean
func fetchAllowed(hc *http.Client, url string, lim ratelimit.Limiter) (*http.Response, error) {
	for {
		if err := lim.Allow(); err != nil {
			return nil, err
		}
		resp, err := hc.Get(url)
		if err == nil {
			return resp, nil
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return nil, err
		}
	}
}

// lines reads a response line by line: a loop with no wait, but a read,
// not a retry.
//
// case: clean
func lines(hc *http.Client, url string) ([]string, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []string
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, line)
	}
}
