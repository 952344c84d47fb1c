package idempotency

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
)

// APIKeyHeader is the second request header ScopeByCredentials reads: the
// header in which Anthropic-style APIs carry their key, as
// Authorization carries OpenAI-style bearer tokens.
const APIKeyHeader = "X-Api-Key"

// ScopeByCredentials is the Scope a Middleware uses when Config.Scope is
// nil: the request's own credentials, so that a key is one client's and
// never meets another's. It reads, and combines when there are several:
//
//   - the public key of the client's TLS certificate, when the connection
//     presented one (TLS makes the client prove it holds the private key,
//     so the certificate need not be verified for this to be safe);
//   - every Authorization header value;
//   - every X-Api-Key header value (APIKeyHeader).
//
// It returns "" when the request carries none of them, and the
// Middleware then refuses a key it cannot scope (400,
// idempotency_scope_missing) rather than put it where any client could
// reach it. The Middleware stores only a SHA-256 of what a Scope returns
// (HashScope), never the credential itself.
//
// The credential is the scope: a client that sends its retry with a new
// token (an OAuth access token refreshed between two attempts) is a new
// scope, and its retry runs the handler again. When your authentication
// resolves a caller to a stable identity, scope by that instead:
//
//	Scope: func(r *http.Request) string { return auth.From(r.Context()).AccountID },
//
// Behind a proxy that terminates TLS, the client's certificate is not on
// the request: read the proxy's header in your own Scope, and only if the
// proxy removes a copy the client sent.
func ScopeByCredentials(r *http.Request) string {
	var cert *x509.Certificate
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cert = r.TLS.PeerCertificates[0]
	}
	return CredentialScope(cert, r.Header.Values("Authorization"), r.Header.Values(APIKeyHeader))
}

// CredentialScope returns the scope of a caller known by a peer
// certificate (nil if none), its Authorization values and its API key
// values: a string that holds each, so that no two callers' credentials
// spell the same scope, or "" when all three are empty. ScopeByCredentials
// and the gRPC interceptor's default (package idemgrpc) are built on it,
// so an HTTP and a gRPC front end on one store scope a caller alike.
func CredentialScope(cert *x509.Certificate, authorization, apiKeys []string) string {
	if cert == nil && len(authorization) == 0 && len(apiKeys) == 0 {
		return ""
	}
	n := 0
	if cert != nil {
		n += len(cert.RawSubjectPublicKeyInfo) + 16
	}
	for _, v := range authorization {
		n += len(v) + 24
	}
	for _, v := range apiKeys {
		n += len(v) + 16
	}
	var b strings.Builder
	b.Grow(n)
	var num [20]byte
	label := func(name string, n int) {
		b.WriteString(name)
		b.Write(strconv.AppendInt(num[:0], int64(n), 10))
		b.WriteByte(':')
	}
	if cert != nil {
		label("spki", len(cert.RawSubjectPublicKeyInfo))
		b.Write(cert.RawSubjectPublicKeyInfo)
	}
	for _, v := range authorization {
		label("authorization", len(v))
		b.WriteString(v)
	}
	for _, v := range apiKeys {
		label("api-key", len(v))
		b.WriteString(v)
	}
	return b.String()
}

// ScopeHeader returns a Scope that scopes keys by the value of the named
// request header (an API key, an account id the proxy in front sets). A
// request without the header has no scope, and a key on it is refused.
// Use it only for a header a client cannot set for another: a secret of
// its own, or one your proxy overwrites.
func ScopeHeader(name string) func(*http.Request) string {
	return func(r *http.Request) string {
		v := r.Header.Values(name)
		if len(v) == 0 {
			return ""
		}
		return name + ":" + strings.Join(v, "\x00")
	}
}

// InsecureSharedScope puts every client's keys in one scope. Set it as
// Config.Scope only when every client is trusted and every key is random
// (a UUID from a client you wrote): under it, a client that reuses or
// guesses another's key is replayed the other's response — its body, its
// Set-Cookie — and a client whose key another used first is refused with
// 422, which tells it the key exists.
func InsecureSharedScope(*http.Request) string { return "*shared*" }

// HashScope returns what the Middleware and idemgrpc give a store for a
// scope: a hex SHA-256 of it, under a label of this package's own, so a
// store never holds a credential in the clear.
//
// The hash has no secret: a store that leaks lets an attacker test
// guesses of a credential against it. That is no weaker than a leaked
// log of API key digests, but a low-entropy credential (a Basic password)
// is better scoped by the account it authenticates.
func HashScope(scope string) string {
	const label = "recoil-idempotency-scope\x00"
	sum := sha256.Sum256(append([]byte(label), scope...))
	var dst [2 * sha256.Size]byte
	return string(hex.AppendEncode(dst[:0], sum[:]))
}
