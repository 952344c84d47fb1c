// Package runtime stands in for go-openapi/runtime: the transport every
// go-swagger generated client sends its operations through.
package runtime

import "net/http"

// ClientOperation is one API operation to send, through Client when it
// is set.
type ClientOperation struct {
	ID, Method, PathPattern string
	Params                  any
	Client                  *http.Client
}

// ClientTransport sends operations.
type ClientTransport interface {
	Submit(*ClientOperation) (any, error)
}
