// Package mqtt is a stand-in for the Eclipse Paho MQTT client: a client
// whose calls hand back tokens to wait on.
package mqtt

import "time"

// Token is what an operation hands back: Wait blocks until it is done.
type Token interface {
	Wait() bool
	WaitTimeout(time.Duration) bool
	Error() error
}

// Client is an MQTT client.
type Client interface {
	Connect() Token
	Publish(topic string, qos byte, retained bool, payload interface{}) Token
}
