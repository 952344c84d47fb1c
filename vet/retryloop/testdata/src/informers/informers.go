// Package informers holds, written anew, loops that look an object up in
// client-go's informer cache again until the informer has seen it: a wait
// for this process's own memory, beside twins that ask a server.
package informers

import (
	"errors"
	"net/http"
	"time"

	"k8s.io/client-go/tools/cache"
)

type pod struct{ IP, Name string }

type client struct {
	informer cache.SharedIndexInformer
	hc       *http.Client
	url      string
}

var errNotFound = errors.New("no pod with that IP")

// podByIP looks the pod up in the informer's store.
func (c *client) podByIP(ip string) (*pod, error) {
	for _, o := range c.informer.GetStore().List() {
		if p, ok := o.(*pod); ok && p.IP == ip {
			return p, nil
		}
	}
	return nil, errNotFound
}

// podByIPRemote asks a server instead.
func (c *client) podByIPRemote(ip string) (*pod, error) {
	resp, err := c.hc.Get(c.url + "?ip=" + ip)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errNotFound
	}
	return &pod{IP: ip}, nil
}

// A constant pause while the informer catches up: every node waits for
// its own cache, with no shared server to spread out for.
//
// case: clean
func (c *client) waitForPod(ip string, tries int) (*pod, error) {
	var err error
	for i := 0; ; i++ {
		var p *pod
		if p, err = c.podByIP(ip); err == nil {
			return p, nil
		}
		if i >= tries {
			return nil, err
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// The same pause around a server's answer: every caller that failed
// together asks again together, whatever the server said.
//
// case: flag nojitter unclassified retryafter
func (c *client) askForPod(ip string, tries int) (*pod, error) {
	var err error
	for i := 0; ; i++ { // want `unclassified: retry loop around client.podByIPRemote retries on every error`
		var p *pod
		if p, err = c.podByIPRemote(ip); err == nil {
			return p, nil
		}
		if i >= tries {
			return nil, err
		}
		time.Sleep(300 * time.Millisecond) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
}
