package ifacelocal

import (
	"net/http"
	"os"
	"time"
)

// store is the twin's seam: one implementation keeps blobs on disk, the
// other on a blob server.
type store interface {
	put(name string, b []byte) error
}

type diskStore struct{ dir string }

func (d diskStore) put(name string, b []byte) error {
	return os.WriteFile(d.dir+"/"+name, b, 0o644)
}

type httpStore struct{ base string }

func (h httpStore) put(name string, _ []byte) error {
	resp, err := http.Post(h.base+"/"+name, "application/octet-stream", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

type uploader struct{ st store }

func (u uploader) save(name string, b []byte) error {
	return u.st.put(name, b)
}

// upload is configure's twin: its seam may be a server.
//
// case: flag nojitter
func upload(u uploader, name string, b []byte) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		if err = u.save(name, b); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
	return err
}
