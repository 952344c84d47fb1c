module github.com/recoil-go/recoil/tools/policyspec

go 1.26.0

require (
	github.com/recoil-go/recoil v0.1.0
	go.yaml.in/yaml/v3 v3.0.6
)

replace github.com/recoil-go/recoil => ../..
