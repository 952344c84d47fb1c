// Package fasthttp is a stand-in for valyala/fasthttp: clients that fill
// the response they are handed and return an error only when no answer
// came.
package fasthttp

import (
	"net"
	"time"
)

// Request is an HTTP request.
type Request struct{ uri string }

// SetRequestURI sets the request's URI.
func (r *Request) SetRequestURI(uri string) { r.uri = uri }

// Response is an HTTP response.
type Response struct {
	status int
	body   []byte
}

// StatusCode returns the response's status.
func (r *Response) StatusCode() int { return r.status }

// Body returns the response's body.
func (r *Response) Body() []byte { return r.body }

// Client sends requests.
type Client struct{ ReadTimeout time.Duration }

// Do sends req and fills resp.
func (c *Client) Do(req *Request, resp *Response) error {
	conn, err := net.Dial("tcp", req.uri)
	if err != nil {
		return err
	}
	return conn.Close()
}

// DoTimeout sends req and fills resp, giving up after timeout.
func (c *Client) DoTimeout(req *Request, resp *Response, timeout time.Duration) error {
	return c.Do(req, resp)
}

// AcquireRequest returns a request from the pool.
func AcquireRequest() *Request { return &Request{} }

// AcquireResponse returns a response from the pool.
func AcquireResponse() *Response { return &Response{} }
