module github.com/recoil-go/recoil/bench

go 1.25.0

replace github.com/recoil-go/recoil => ../

require (
	github.com/avast/retry-go/v4 v4.7.0
	github.com/cenkalti/backoff/v5 v5.0.3
	github.com/eapache/go-resiliency v1.7.0
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/recoil-go/recoil v0.0.0-00010101000000-000000000000
	github.com/sethvargo/go-retry v0.5.0
)

require github.com/bits-and-blooms/bitset v1.24.4 // indirect
