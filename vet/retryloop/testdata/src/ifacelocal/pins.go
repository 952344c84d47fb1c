// Package ifacelocal holds, written anew, retries of work that goes
// through the package's own interface: a board driver that opens its
// pin files through a file-system seam (the real one over os.OpenFile, an
// in-memory one for its tests), beside a twin whose seam has a network
// implementation too. The package also talks HTTP, so nothing in it is
// local by the package alone.
package ifacelocal

import (
	"errors"
	"net/http"
	"os"
	"time"
)

// fileSystem is the seam the driver opens files through.
type fileSystem interface {
	open(name string, flag int) (*os.File, error)
}

// nativeFS opens files on this machine.
type nativeFS struct{}

func (nativeFS) open(name string, flag int) (*os.File, error) {
	return os.OpenFile(name, flag, 0o644)
}

// memFS stands in for the file system in the driver's tests.
type memFS struct{ files map[string]*os.File }

func (m *memFS) open(name string, _ int) (*os.File, error) {
	if f, ok := m.files[name]; ok {
		return f, nil
	}
	return nil, errors.New(name + ": no such file")
}

type pinAccess struct{ fs fileSystem }

func (a pinAccess) openRW(path string) (*os.File, error) {
	return a.fs.open(path, os.O_RDWR)
}

// configure waits for udev to make the pin's direction file writable.
//
// case: clean
func configure(a pinAccess, pin string) (*os.File, error) {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var f *os.File
		if f, err = a.openRW("/sys/class/gpio/" + pin + "/direction"); err == nil {
			return f, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, err
}

// report posts a reading to the collector.
func report(url string) error {
	resp, err := http.Post(url, "text/plain", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
