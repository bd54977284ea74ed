#!/usr/bin/env bash
# End-to-end tests: the built ./caddy serves e2e/Caddyfile (llm_stream routes
# in front of llm_mock fake upstreams), and the real client libraries consume
# it: the `ai` package (DefaultChatTransport, readUIMessageStream, Chat), the
# `openai` and `@anthropic-ai/sdk` npm SDKs, @ag-ui/client's HttpAgent (1.0.0
# and 0.0.59) and a CopilotKit runtime (e2e/copilotkit), eventsource-parser,
# Codex CLI (@openai/codex), Claude Code, and the Go SDKs openai-go and
# anthropic-sdk-go, plus the examples in examples/aisdk-page and
# examples/go-client, and the agent loop (CONTRACT.md §12) through Caddy
# with real MCP servers (@modelcontextprotocol/server-everything over stdio
# and streamable HTTP, @modelcontextprotocol/server-filesystem), as the
# toolserver package is tested against them too.
#
#   bash e2e/run.sh
#
# Needs Go, Node.js 20+ and npm. It builds ./caddy (../xcaddy.sh build; set
# E2E_NO_BUILD=1 to use the ./caddy there is), installs the npm packages
# from the lock files when node_modules is missing or stale, starts Caddy,
# waits until it answers, runs `node --test` then `go test`, and stops Caddy
# whatever happens. It exits non-zero if anything failed. A Chromium on the
# machine (apt-get install chromium) adds a real-browser test of the page.
# Last, it serves the default Caddyfile and drives the playground page in
# headless Chromium (e2e/playground; screenshots in .ci/artifacts/playground).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

base=http://127.0.0.1:18080
log=$(mktemp "${TMPDIR:-/tmp}/llmstream-e2e-caddy.XXXXXX")
# Caddy's data directory for the run: the conversation route keeps its
# conversations there (the default file store), and they go with it.
data=$(mktemp -d "${TMPDIR:-/tmp}/llmstream-e2e-data.XXXXXX")
caddy_pid=
# The agent loop's real MCP servers (e2e/Caddyfile's /loop routes): the
# directory server-filesystem may read, and server-everything over
# streamable HTTP on two loopback ports, each restarted by a small
# supervisor when it exits (test/loop_servers.test.mjs kills the second one
# mid-call). The pid files say which process serves each port now.
mcp=$(mktemp -d "${TMPDIR:-/tmp}/llmstream-e2e-mcp.XXXXXX")
export E2E_FS_ROOT=$mcp/files
export E2E_MCP_PORT=9131 E2E_MCP_KILL_PORT=9132
export E2E_MCP_KILL_PIDFILE=$mcp/kill.pid
supervisors=()

# mcp_http <port> <pidfile>: server-everything over streamable HTTP on
# <port>, started again 0.2s after it exits, until $mcp/stop exists.
mcp_http() {
	local port=$1 pidfile=$2
	while [ ! -e "$mcp/stop" ]; do
		PORT=$port e2e/node_modules/.bin/mcp-server-everything streamableHttp >>"$mcp/http-$port.log" 2>&1 &
		echo $! >"$pidfile"
		wait $! 2>/dev/null || true
		sleep 0.2
	done
}
stop_mcp() {
	touch "$mcp/stop"
	local f
	for f in "$mcp"/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	for f in "${supervisors[@]}"; do
		wait "$f" 2>/dev/null || true
	done
	supervisors=()
}

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
	stop_mcp
	rm -rf "$data" "$mcp"
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
npm_install "$root/e2e/copilotkit"
npm_install "$root/examples/aisdk-page"
step "bundling examples/aisdk-page"
(cd examples/aisdk-page && npm run --silent build)

step "starting server-everything over streamable HTTP (:$E2E_MCP_PORT, :$E2E_MCP_KILL_PORT); server-filesystem's directory"
mkdir -p "$E2E_FS_ROOT"
# What test/loop_servers.test.mjs reads through the loop: new every run,
# so that only a real read can quote it.
printf 'llmstream e2e notes, run %s-%s: the secret word is swordfish.\n' "$(date +%s)" "$RANDOM" >"$E2E_FS_ROOT/notes.txt"
mcp_http "$E2E_MCP_PORT" "$mcp/http.pid" &
supervisors+=($!)
mcp_http "$E2E_MCP_KILL_PORT" "$E2E_MCP_KILL_PIDFILE" &
supervisors+=($!)
for port in "$E2E_MCP_PORT" "$E2E_MCP_KILL_PORT"; do
	for _ in $(seq 1 100); do
		node -e "require('net').connect($port, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))" 2>/dev/null && break
		sleep 0.2
	done
done

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
# The tool servers connect in the background; the loop tests need them
# all. Wait until Caddy logged as many connections as the config names
# servers (bounded: a server that never comes makes its tests fail, and
# the log says why).
servers=$(./caddy adapt --config e2e/Caddyfile --adapter caddyfile 2>/dev/null | node -e '
let n = 0;
const walk = (v) => { if (Array.isArray(v)) v.forEach(walk); else if (v && typeof v === "object") { if (v.tool_servers) n += (v.tool_servers.mcp ?? []).length; Object.values(v).forEach(walk); } };
let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { walk(JSON.parse(s)); console.log(n); });')
for _ in $(seq 1 300); do
	[ "$(grep -c '"tool server connected"' "$log" || true)" -ge "$servers" ] && break
	sleep 0.2
done
echo "tool servers connected: $(grep -c '"tool server connected"' "$log" || true) of $servers"

failed=()

step "node --test (ai, openai, @anthropic-ai/sdk, @ag-ui/client, codex, claude-code, eventsource-parser, examples/aisdk-page)"
# E2E_NODE_TESTS narrows the Node tests (files under e2e/, a glob) and
# E2E_GO_RUN the Go tests (a -run pattern), for working on one part.
if ! (cd e2e && node --test --test-reporter=spec --test-timeout=60000 ${E2E_NODE_TESTS:-test/*.test.mjs}); then
	failed+=("node --test")
fi

step "node --test in e2e/copilotkit (a CopilotKit runtime with the agui route as its agent)"
if ! (cd e2e/copilotkit && node --test --test-reporter=spec --test-timeout=60000 ./*.test.mjs); then
	failed+=("node --test e2e/copilotkit")
fi

step "go test (openai-go, anthropic-sdk-go, examples/go-client)"
golog=$(mktemp "${TMPDIR:-/tmp}/llmstream-e2e-go.XXXXXX")
if (cd e2e/go && go test -count=1 -timeout=5m -v -run "${E2E_GO_RUN:-.}" ./...) >"$golog" 2>&1; then
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

if [ -z "${E2E_GO_RUN:-}" ]; then
	step "go test -run TestRealServers ./toolserver/ (server-everything over stdio and HTTP, server-filesystem)"
	if ! MCP_NODE_MODULES="$root/e2e/node_modules" MCP_REQUIRE_REAL=1 go test -count=1 -timeout=5m -run TestRealServers -v ./toolserver/ 2>&1 | grep -E -- '^(\s*--- |ok|FAIL|PASS|panic)|_test.go'; then
		failed+=("go test ./toolserver (real MCP servers)")
	fi
fi

step "go test -run TestEverythingThroughTheLoop ./caddymodule/ (server-everything's elicitation and resource updates through a conversation's loop)"
if ! MCP_NODE_MODULES="$root/e2e/node_modules" MCP_REQUIRE_REAL=1 go test -count=1 -timeout=5m -run TestEverythingThroughTheLoop -v ./caddymodule/ 2>&1 | grep -E -- '^(\s*--- |ok|FAIL|PASS|panic)|_test.go'; then
	failed+=("go test ./caddymodule (server-everything through the loop)")
fi

stop_caddy

# The playground (caddymodule/playground) against the repository's default
# Caddyfile, as a first-time user runs it: :8080, its llm_mock upstreams on
# 127.0.0.1:9101-9110, Caddy's admin on localhost:2019. Screenshots go to
# $PLAYGROUND_SHOTS (default .ci/artifacts/playground).
# Skipped when E2E_NODE_TESTS or E2E_GO_RUN narrows the run to one part.
if [ -z "${E2E_NODE_TESTS:-}${E2E_GO_RUN:-}" ]; then
	step "starting Caddy with the default Caddyfile (the playground)"
	./caddy validate --config Caddyfile --adapter caddyfile >"$log" 2>&1 || {
		cat "$log" >&2
		exit 1
	}
	XDG_DATA_HOME=$data ./caddy run --config Caddyfile --adapter caddyfile >"$log" 2>&1 &
	caddy_pid=$!
	ready=
	for _ in $(seq 1 100); do
		if ! kill -0 "$caddy_pid" 2>/dev/null; then
			echo "Caddy exited before it was ready (ports 8080/9101-9110/2019 in use?):" >&2
			tail -n 20 "$log" >&2
			exit 1
		fi
		if node -e "fetch('http://127.0.0.1:8080/playground/routes.json').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))" 2>/dev/null; then
			ready=1
			break
		fi
		sleep 0.2
	done
	if [ -z "$ready" ]; then
		echo "the default Caddyfile's playground did not answer in time:" >&2
		tail -n 20 "$log" >&2
		exit 1
	fi
	step "node --test e2e/playground (the playground in headless Chromium, playwright-core)"
	if ! (cd e2e && PLAYGROUND_SHOTS=${PLAYGROUND_SHOTS:-$root/.ci/artifacts/playground} node --test --test-reporter=spec --test-timeout=300000 playground/); then
		failed+=("node --test e2e/playground")
	fi
	stop_caddy
fi

printf '\n== e2e finished in %ds\n' $((SECONDS - start))
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "all e2e tests passed"
