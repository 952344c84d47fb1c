// Package mqtttoken holds, written anew, MQTT start-ups through Paho's
// client, whose Connect hands back a token: Wait blocks until the connect
// is done and says true, and the token's Error is how it went.
package mqtttoken

import (
	"log"
	"math/rand/v2"
	"net"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

type transport struct {
	client  mqtt.Client
	retries int
}

// dialBroker is the transport's own dialer, handed to the client's options.
func dialBroker(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, 5*time.Second)
}

// A failed connect waits i*i seconds, growing with the count and never
// randomised.
//
// case: flag nojitter
func (t *transport) Start() error { // want Start:`remote=0 waits=true deaf=true jitter=1 durparam=0 retryafter=false bydefault=false ownretry`
	var err error
	for i := 1; i <= t.retries; i++ {
		if token := t.client.Connect(); token.Wait() && token.Error() == nil {
			return nil
		} else {
			err = token.Error()
			log.Printf("connect %d/%d: %v", i, t.retries, err)
		}
		time.Sleep(time.Duration(i*i) * time.Second) // want `nojitter: this wait in a retry loop`
	}
	return err
}

// The same with a random wait up to the growing one.
//
// case: clean
func (t *transport) StartJittered() error { // want StartJittered:`remote=0 waits=true deaf=true jitter=2 durparam=0 retryafter=false bydefault=false ownretry`
	var err error
	for i := 1; i <= t.retries; i++ {
		if token := t.client.Connect(); token.Wait() && token.Error() == nil {
			return nil
		} else {
			err = token.Error()
		}
		time.Sleep(rand.N(time.Duration(i*i) * time.Second))
	}
	return err
}
