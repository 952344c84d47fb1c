#!/bin/sh
# Fetches the real configuration files files.txt names, at their pinned
# commits, into DIR/<repository>/<path>; then
#   RECOIL_LONG=1 RECOIL_AUDIT_CORPUS=DIR go test -run TestRealFiles -v ./tools/audit
# scores how many the audit reads without edits. Nothing fetched is committed.
set -eu
dir=${1:?usage: fetch.sh DIR}
list=$(dirname "$0")/files.txt
grep -v '^#' "$list" | grep . | while read -r kind repo commit path extract; do
	mkdir -p "$dir/$repo/$(dirname "$path")"
	curl -fsSL "https://raw.githubusercontent.com/$repo/$commit/$path" -o "$dir/$repo/$path"
done
