// Package bench runs recoil proxy beside httputil.ReverseProxy and an
// open-source Go gateway, Caddy's reverse_proxy, in one benchmark on one
// upstream (docs/benchmarks.md, "recoil proxy"). It is a module of its own,
// outside the repository's go.work, so that Caddy is never in the proxy
// module's graph nor built by the repository's tests; its own go.work
// lets the go command run from this directory (see BenchmarkGateways).
package bench
