module github.com/recoil-go/recoil/vet

go 1.26.0

require (
	github.com/golangci/plugin-module-register v0.1.2
	// v0.49.0, not later: from v0.50.0 unitchecker writes its own type
	// information, which fails on packages the compiler accepts (docs/vet.md,
	// "Install from a clone").
	golang.org/x/tools v0.49.0
)

require (
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
)
