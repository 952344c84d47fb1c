module github.com/recoil-go/recoil/proxy/sdktest

go 1.26.0

require (
	github.com/openai/openai-go/v3 v3.98.0
	github.com/recoil-go/recoil/proxy v0.1.0
	github.com/recoil-go/recoil/tools/policyspec v0.1.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/recoil-go/recoil v0.1.0 // indirect
	github.com/recoil-go/recoil/fleet v0.1.0 // indirect
	github.com/recoil-go/recoil/recoilprom v0.1.0 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace (
	github.com/recoil-go/recoil => ../..
	github.com/recoil-go/recoil/fleet => ../../fleet
	github.com/recoil-go/recoil/proxy => ..
	github.com/recoil-go/recoil/recoilprom => ../../recoilprom
	github.com/recoil-go/recoil/tools/policyspec => ../../tools/policyspec
)
