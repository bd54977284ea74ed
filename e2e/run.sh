#!/usr/bin/env bash
# End-to-end tests: the built ./caddy serves e2e/Caddyfile (llm_stream routes
# in front of llm_mock fake upstreams), and the real client libraries consume
# it: the `ai` package (DefaultChatTransport, readUIMessageStream, Chat), the
# `openai` and `@anthropic-ai/sdk` npm SDKs, eventsource-parser, Codex CLI
# (@openai/codex), Claude Code, and the Go SDKs openai-go and
# anthropic-sdk-go, plus the examples in examples/aisdk-page and
# examples/go-client, and the toolserver package against real MCP servers
# (@modelcontextprotocol/server-everything over stdio and streamable HTTP,
# @modelcontextprotocol/server-filesystem).
#
#   bash e2e/run.sh
#
# Needs Go, Node.js 20+ and npm. It builds ./caddy (../xcaddy.sh build; set
# E2E_NO_BUILD=1 to use the ./caddy there is), installs the npm packages
# from the lock files when node_modules is missing or stale, starts Caddy,
# waits until it answers, runs `node --test` then `go test`, and stops Caddy
# whatever happens. It exits non-zero if anything failed. A Chromium on the
# machine (apt-get install chromium) adds a real-browser test of the page.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

base=http://127.0.0.1:18080
log=$(mktemp "${TMPDIR:-/tmp}/llmstream-e2e-caddy.XXXXXX")
# Caddy's data directory for the run: the conversation route keeps its
# conversations there (the default file store), and they go with it.
data=$(mktemp -d "${TMPDIR:-/tmp}/llmstream-e2e-data.XXXXXX")
caddy_pid=

stop_caddy() {
	if [ -n "$caddy_pid" ] && kill -0 "$caddy_pid" 2>/dev/null; then
		kill "$caddy_pid" 2>/dev/null || true
		wait "$caddy_pid" 2>/dev/null || true
	fi
	caddy_pid=
}
cleanup() {
	local rc=$?
	stop_caddy
	rm -rf "$data"
	if [ "$rc" -ne 0 ] && [ -s "$log" ]; then
		echo "Caddy's log is kept in $log" >&2
	else
		rm -f "$log"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n== %s\n' "$*"; }

# npm_install installs a package folder's locked dependencies unless they
# are already there and the lock file has not changed since.
npm_install() {
	local dir=$1
	if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
		step "npm ci in ${dir#"$root"/}"
		(cd "$dir" && npm ci --no-audit --no-fund)
	fi
}

start=$SECONDS

if [ -z "${E2E_NO_BUILD:-}" ]; then
	step "building ./caddy"
	./xcaddy.sh build
fi

step "validating e2e/Caddyfile"
./caddy validate --config e2e/Caddyfile --adapter caddyfile >"$log" 2>&1 || {
	cat "$log" >&2
	exit 1
}

npm_install "$root/e2e"
npm_install "$root/examples/aisdk-page"
step "bundling examples/aisdk-page"
(cd examples/aisdk-page && npm run --silent build)

step "starting Caddy with e2e/Caddyfile"
XDG_DATA_HOME=$data ./caddy run --config e2e/Caddyfile --adapter caddyfile >"$log" 2>&1 &
caddy_pid=$!
ready=
for _ in $(seq 1 100); do
	if ! kill -0 "$caddy_pid" 2>/dev/null; then
		echo "Caddy exited before it was ready (ports 18080/18100 in use?):" >&2
		tail -n 20 "$log" >&2
		exit 1
	fi
	if node -e "fetch('$base/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))" 2>/dev/null; then
		ready=1
		break
	fi
	sleep 0.2
done
if [ -z "$ready" ]; then
	echo "Caddy did not answer $base/healthz in time:" >&2
	tail -n 20 "$log" >&2
	exit 1
fi

failed=()

step "node --test (ai, openai, @anthropic-ai/sdk, codex, claude-code, eventsource-parser, examples/aisdk-page)"
if ! (cd e2e && node --test --test-reporter=spec --test-timeout=60000 test/*.test.mjs); then
	failed+=("node --test")
fi

step "go test (openai-go, anthropic-sdk-go, examples/go-client)"
golog=$(mktemp "${TMPDIR:-/tmp}/llmstream-e2e-go.XXXXXX")
if (cd e2e/go && go test -count=1 -timeout=5m -v ./...) >"$golog" 2>&1; then
	grep -E '^(ok|PASS)' "$golog" || true
else
	failed+=("go test")
	grep -v -E '^(=== (RUN|PAUSE|CONT)|\s*--- PASS)' "$golog" || true
fi
grep -E -- '--- SKIP|TODO\(llmstream' "$golog" || true
# The plain closing line: N passed, N failed, N skipped (t.Run cases count).
printf 'go: %d passed, %d failed, %d skipped\n' \
	"$(grep -c -E '^\s*--- PASS' "$golog" || true)" \
	"$(grep -c -E '^\s*--- FAIL' "$golog" || true)" \
	"$(grep -c -E '^\s*--- SKIP' "$golog" || true)"
rm -f "$golog"

step "go test -run TestRealServers ./toolserver/ (server-everything over stdio and HTTP, server-filesystem)"
if ! MCP_NODE_MODULES="$root/e2e/node_modules" MCP_REQUIRE_REAL=1 go test -count=1 -timeout=5m -run TestRealServers -v ./toolserver/ 2>&1 | grep -E -- '^(\s*--- |ok|FAIL|PASS|panic)|_test.go'; then
	failed+=("go test ./toolserver (real MCP servers)")
fi

step "go test -run TestEverythingThroughTheLoop ./caddymodule/ (server-everything's elicitation and resource updates through a conversation's loop)"
if ! MCP_NODE_MODULES="$root/e2e/node_modules" MCP_REQUIRE_REAL=1 go test -count=1 -timeout=5m -run TestEverythingThroughTheLoop -v ./caddymodule/ 2>&1 | grep -E -- '^(\s*--- |ok|FAIL|PASS|panic)|_test.go'; then
	failed+=("go test ./caddymodule (server-everything through the loop)")
fi

stop_caddy
printf '\n== e2e finished in %ds\n' $((SECONDS - start))
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "all e2e tests passed"
