#!/bin/bash
# Two recoil proxies sharing one fleet allowance (100 a second) in a Redis of
# their own, driven by two recoil load runs at 150 a second each, with Redis
# killed for 3 s in the middle.
set -u
# Build the two commands first, from the repository's root:
#   go build -o /tmp/rp/recoil ./tools/cmd/recoil
#   CGO_ENABLED=0 go build -o /tmp/rp/recoil-proxy ./proxy/cmd/recoil-proxy
# Ports 16390 (its own Redis), 18080, 18787 and 18788 must be free.
cd "$(dirname "$0")" && OUT=$(mktemp -d) && cp proxy.yaml none.yaml "$OUT" && cd "$OUT"
redis-server --port 16390 --save '' --appendonly no --daemonize no > redis.log 2>&1 & RPID=$!
/tmp/rp/recoil gateway -addr 127.0.0.1:18080 -window 1s > gateway.out 2> gateway.err & GPID=$!
sleep 0.5
KEY=sk-test /tmp/rp/recoil-proxy -config proxy.yaml -listen 127.0.0.1:18787 -quiet 2> p1.err & P1=$!
KEY=sk-test /tmp/rp/recoil-proxy -config proxy.yaml -listen 127.0.0.1:18788 -quiet 2> p2.err & P2=$!
sleep 1
BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}'
/tmp/rp/recoil load -url http://127.0.0.1:18787/v1/chat/completions -body "$BODY" -rate 150 -duration 12s -window 1s -policy-file none.yaml -json > load1.json 2> load1.err & L1=$!
/tmp/rp/recoil load -url http://127.0.0.1:18788/v1/chat/completions -body "$BODY" -rate 150 -duration 12s -window 1s -policy-file none.yaml -json > load2.json 2> load2.err & L2=$!
( for i in $(seq 1 26); do
    printf '%s %s %s\n' "$(date +%s.%N | cut -c1-14)" \
      "$(curl -s http://127.0.0.1:18787/metrics | grep '^recoil_proxy_fleet_shared' | cut -d' ' -f2)" \
      "$(curl -s http://127.0.0.1:18788/metrics | grep '^recoil_proxy_fleet_shared' | cut -d' ' -f2)"
    sleep 0.5
  done > shared.txt ) &
sleep 4
curl -s http://127.0.0.1:18787/metrics | grep '^recoil_proxy_fleet_shared' > shared-before.txt
kill $RPID; wait $RPID 2>/dev/null
sleep 1.5
curl -s http://127.0.0.1:18787/metrics | grep -E '^recoil_proxy_fleet_shared|^recoil_fleet_fallbacks_total' > shared-during.txt
curl -s http://127.0.0.1:18787/recoil/state > state-during.json
sleep 1.5
redis-server --port 16390 --save '' --appendonly no --daemonize no >> redis.log 2>&1 & RPID=$!
sleep 3
curl -s http://127.0.0.1:18787/metrics | grep '^recoil_proxy_fleet_shared' > shared-after.txt
wait $L1 $L2
sleep 2
curl -s http://127.0.0.1:18080/stats > stats.json
kill $P1 $P2 $GPID $RPID
wait $P1 $P2 $GPID $RPID 2>/dev/null
echo "results in $OUT: stats.json (what the upstream counted per 1 s window), load1.json, load2.json, shared-*.txt"
