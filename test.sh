#!/usr/bin/env bash
# Runs every llmstream test:
#   1. go vet, then the Go tests under the race detector: unit and table
#      tests, the fuzz targets' seed corpora, the golden files, and the
#      caddytest integration tests that run Caddy in process;
#   2. the end-to-end tests (e2e/run.sh): a built ./caddy in front of
#      llm_mock, consumed by the real client libraries (npm ai, openai,
#      eventsource-parser; Go openai-go) and the examples.
# Needs Go 1.26 and gcc (-race uses cgo); step 2 also needs Node.js 20 and
# npm (it runs npm ci).
set -euo pipefail
cd "$(dirname "$0")"

go vet ./...
go test -race ./...
bash e2e/run.sh
