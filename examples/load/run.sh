#!/usr/bin/env bash
# The load and fault harness (docs/operations.md "Load and faults"): starts
# the fake upstreams (mock.Caddyfile), Redis and the gateway (gateway.Caddyfile) on
# 127.0.0.1, runs llmload, and stops them. From the repository root:
#
#   examples/load/run.sh streams [N] [ROUTE...] N paced streams open at once (default 10000) on each ROUTE
#                                               (default raw stream/openai), a fresh gateway for each
#   examples/load/run.sh soak [DURATION]        a steady mix of every protocol (default 1h), sampled every minute
#   examples/load/run.sh faults                 every fault class under load, each checked
#   examples/load/run.sh compare [REPS] [C...]  CPU and RSS per stream of every protocol and of /raw
#                                               (plain reverse_proxy), rotated, a fresh gateway each time;
#                                               medians and ratios at the end (default 3 reps, c=100 300)
#   examples/load/run.sh heap [N] [ROUTE...]    the gateway's heap per open stream by owner (exact sampling)
#   examples/load/run.sh ci                     short versions of streams, soak and faults (a few minutes)
#
# Run it in a network namespace of its own where other people's servers
# may hold the ports (8480-8491): `unshare -n` with lo up, e.g.
# /work/bin/isolated examples/load/run.sh ci. It needs ./caddy
# (./xcaddy.sh build), redis-server for the conversation faults (skipped
# without it), and exits non-zero when a check fails: a stream that broke
# its protocol, lost text or hung, or goroutines, open files or child
# processes left behind.
set -euo pipefail
cd "$(dirname "$0")/../.."

what=${1:-ci}
[ $# -gt 0 ] && shift
out=${LOAD_OUT:-.build/load}
mkdir -p "$out"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

caddy=${CADDY:-./caddy}
[ -x "$caddy" ] || ./xcaddy.sh build
go build -o "$out/llmload" ./cmd/llmload
load=("$out/llmload")
gw=http://127.0.0.1:8480
metrics=http://127.0.0.1:8490/metrics
protocols=(gymbro jsonseq skillpet aisdk openai responses anthropic agui)

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}
trap cleanup EXIT

wait_port() { # host:port
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on $1" >&2
	return 1
}

# redis_args run Redis as a store of conversations is run: every write
# in the append-only file, fsynced, so that a restart loses nothing that
# was acknowledged (without persistence a restart loses every
# conversation, whatever the client of Redis does).
redis_args=(--port 8491 --bind 127.0.0.1 --save '' --appendonly yes --appendfsync always
	--dir "$PWD/$out/redis" --logfile "$PWD/$out/redis.log")

redis_pid=
start_redis() {
	if ! command -v redis-server >/dev/null; then
		echo "redis-server not installed: the conversation faults are skipped"
		return 1
	fi
	rm -rf "$out/redis" && mkdir -p "$out/redis"
	redis-server "${redis_args[@]}" --daemonize no &
	redis_pid=$!
	pids+=("$redis_pid")
	wait_port 127.0.0.1:8491
}

gateway_pid=
up() {
	local have_redis=0
	start_redis && have_redis=1
	"$caddy" run --config examples/load/mock.Caddyfile >"$out/mock.log" 2>&1 &
	pids+=($!)
	"$caddy" run --config examples/load/gateway.Caddyfile >"$out/gateway.log" 2>&1 &
	gateway_pid=$!
	pids+=("$gateway_pid")
	wait_port 127.0.0.1:8481
	wait_port 127.0.0.1:8480
	wait_port 127.0.0.1:8490
	# Warm every path once, so that what starts lazily is in the baselines.
	"${load[@]}" -url "$(routes stream)" -n 14 -c 7 -quiet >/dev/null
	return 0
}

# measuring starts the mock and the measuring gateway (streams.Caddyfile);
# gateway_on and gateway_off start and stop the gateway alone, so that
# each measurement has a fresh process.
measuring() {
	"$caddy" run --config examples/load/mock.Caddyfile >"$out/mock.log" 2>&1 &
	pids+=($!)
	wait_port 127.0.0.1:8481
}
gateway_on() {
	"$caddy" run --config examples/load/streams.Caddyfile >"$out/gateway.log" 2>&1 &
	gateway_pid=$!
	wait_port 127.0.0.1:8480
	wait_port 127.0.0.1:8490
	# What starts lazily (the proxy's transport, the pools) is in the
	# baseline; the streams are measured from there.
	"${load[@]}" -url "openai=$gw/stream/openai,openai=$gw/raw" -n 10 -c 5 -quiet >/dev/null
}
gateway_off() {
	kill "$gateway_pid"
	wait "$gateway_pid" 2>/dev/null || true
}
proto_of() { # route → the protocol whose client reads it
	case $1 in
	raw) echo openai ;;
	*) echo "${1##*/}" ;;
	esac
}

routes() { # prefix → every protocol's route on it, for -url
	local p list=
	for p in "${protocols[@]}"; do list+="$p=$gw/$1/$p,"; done
	echo "${list%,}"
}

# children prints the gateway's child processes (tool servers), zombies
# marked.
children() { ps -o pid=,stat=,args= --ppid "$gateway_pid" 2>/dev/null || true; }

check_children() { # what, expected count
	local kids zombies n
	kids=$(children)
	zombies=$(grep -c ' Z' <<<"$kids" || true)
	n=$(grep -c . <<<"$kids" || true)
	echo "children $n tool server processes ($2 configured), $zombies zombies"
	if [ "$zombies" -gt 0 ] || [ "$n" -gt "$2" ]; then
		echo "LEFTOVER $1: child processes" >&2
		echo "$kids" >&2
		return 1
	fi
}

failures=0
step() { # title, llmload args...
	local title=$1
	shift
	echo
	echo "=== $title"
	echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
	if ! "${load[@]}" -metrics "$metrics" "$@"; then
		echo "FAILED: $title" >&2
		failures=$((failures + 1))
	fi
}

# faults runs every fault class; scale multiplies the streams.
faults() {
	local n=$((70 * $1)) c=$((14 * $1))
	local common=(-check -quiet -leftovers 30s -timeout 60s)
	if [ -n "${ONLY_REDIS:-}" ]; then
		redis_restarts "$c"
		return
	fi
	for kind in reset stall garbage slow_start status; do
		step "upstream fault: $kind (every 5th reply; status: 20 in a row of 50)" \
			-url "$(routes fault/$kind)" -n "$n" -c "$c" "${common[@]}"
	done
	step "client fault: aborts (every 3rd stream hangs up after its first event)" \
		-url "$(routes stream)" -n "$n" -c "$c" -abort 3 "${common[@]}"
	step "client fault: slow readers (every 3rd reads 64 bytes each 50ms)" \
		-url "$(routes stream)" -n "$n" -c "$c" -slow 3 -slow-pause 50ms "${common[@]}"
	step "client fault: never-reading clients (every 3rd, holding 5s)" \
		-url "$(routes stream)" -n "$n" -c "$c" -noread 3 -noread-hold 5s "${common[@]}"
	step "client fault: slowloris request bodies (every 3rd, a byte each 20ms)" \
		-url "$(routes stream)" -n "$n" -c "$c" -slowloris 3 -slowloris-gap 20ms "${common[@]}"
	local agents="openai=$gw/agent/openai,aisdk=$gw/agent/aisdk,responses=$gw/agent/responses,anthropic=$gw/agent/anthropic"
	step "tools: the demo server, in-process (no fault)" -url "$agents" -n "$n" -c "$c" "${common[@]}"
	step "tool fault: a stdio server that dies at every 7th call" \
		-url "openai=$gw/agent-die/openai,anthropic=$gw/agent-die/anthropic" -n "$n" -c "$c" -same-answer=false "${common[@]}"
	check_children "tool server deaths" 4 || failures=$((failures + 1))
	step "tool fault: a stdio server that never answers every 7th call (timeout 2s)" \
		-url "openai=$gw/agent-hang/openai,responses=$gw/agent-hang/responses" -n "$n" -c "$c" -same-answer=false "${common[@]}"
	check_children "hung tool calls" 4 || failures=$((failures + 1))
	redis_restarts "$c"
}

redis_restarts() { # conversations
	local c=$1
	if [ -n "$redis_pid" ]; then
		echo
		echo "=== Redis restarts during conversation turns ($c conversations, 5 turns each; Redis killed and restarted twice)"
		(
			for _ in 1 2; do
				sleep 2
				kill -9 "$redis_pid"
				sleep 1
				redis-server "${redis_args[@]}" --daemonize yes --pidfile "$PWD/$out/redis.pid"
				sleep 1
				redis_pid=$(cat "$out/redis.pid")
			done
		) &
		local killer=$!
		step "conversations across Redis restarts" -url "skillpet=$gw/conv/skillpet/stream" -conversations "$c" -turns 5 \
			-check -quiet -leftovers 30s -timeout 60s
		wait "$killer" || true
		[ -f "$out/redis.pid" ] && pids+=("$(cat "$out/redis.pid")")
	fi
}

case $what in
streams)
	n=${1:-10000}
	[ $# -gt 0 ] && shift
	set -- "${@:-raw stream/openai}"
	export LOAD_INTERVAL=${LOAD_INTERVAL:-300ms} LOAD_UPSTREAM_VERSIONS=${LOAD_UPSTREAM_VERSIONS:-h2c}
	measuring
	for route in $*; do
		gateway_on
		step "$n paced streams at once on /$route (deltas every $LOAD_INTERVAL, upstream $LOAD_UPSTREAM_VERSIONS)" \
			-url "$(proto_of "$route")=$gw/$route" -c "$n" -n "$((2 * n))" -ramp "${RAMP:-20s}" -sample 5s -timeout 5m \
			-leftovers 60s -slack 50
		gateway_off
	done
	;;
soak)
	duration=${1:-1h}
	# 10 new streams a second of ~7 s each (73 deltas 100ms apart): about
	# 75 open at any time, every one read and checked by its protocol's
	# client.
	export LOAD_INTERVAL=${LOAD_INTERVAL:-100ms}
	up
	step "soak: every protocol in rotation, ${LOAD_RATE:-10} new streams a second (deltas every $LOAD_INTERVAL), for $duration" \
		-url "$(routes stream)" -rate "${LOAD_RATE:-10}" -c 2000 -duration "$duration" -sample "${SAMPLE:-1m}" -check -leftovers 60s \
		> >(tee "$out/soak.log")
	wait $! 2>/dev/null || sleep 1 # tee has written everything
	# The samples as CSV, to see the trend (flat after warm-up: no growth).
	{
		echo "t,open_streams,cpu_s,rss_mib,heap_inuse_mib,goroutines,open_fds"
		awk '$1 == "sample" && $2 != "t" {printf "%s,%s,%s,%s,%s,%s,%s\n", $2, $3, $4, $5, $6, $7, $8}' "$out/soak.log"
	} >"$out/soak.csv"
	echo "samples: $out/soak.csv"
	;;
faults)
	up
	faults "${SCALE:-3}"
	;;
compare)
	reps=${1:-3}
	[ $# -gt 0 ] && shift
	concs=("${@:-100 300}")
	export LOAD_INTERVAL=${LOAD_INTERVAL:-100ms}
	measuring
	list=(raw "${protocols[@]/#/stream/}")
	tsv="$out/compare.tsv"
	: >"$tsv"
	for c in ${concs[*]}; do
		for rep in $(seq "$reps"); do
			# Rotated: each repetition starts one route later.
			k=$(((rep - 1) % ${#list[@]}))
			for r in "${list[@]:k}" "${list[@]:0:k}"; do
				gateway_on
				load_avg=$(cut -d' ' -f1 /proc/loadavg)
				res=$("${load[@]}" -metrics "$metrics" -url "$(proto_of "$r")=$gw/$r" -c "$c" -n "$((3 * c))" \
					-ramp 1s -quiet -sample 1s -timeout 2m)
				gateway_off
				cpu=$(sed -n 's/^gateway  CPU \([0-9]*\) µs per stream.*/\1/p' <<<"$res")
				rss=$(sed -n 's/^gateway  per open stream.*RSS \([-0-9.]*\) KiB.*/\1/p' <<<"$res")
				ok=$(sed -n 's/^outcome  ok  *\([0-9]*\)$/\1/p' <<<"$res")
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$rep" "$r" "${cpu:-?}" "${rss:-?}" "${ok:-0}" "$load_avg" | tee -a "$tsv"
			done
		done
	done
	echo
	echo "medians (c, route, CPU µs per stream, × raw, RSS KiB per open stream, + raw):"
	for c in ${concs[*]}; do
		for r in "${list[@]}"; do
			cpu=$(awk -F'\t' -v c="$c" -v r="$r" '$1==c && $3==r {print $4}' "$tsv" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
			rss=$(awk -F'\t' -v c="$c" -v r="$r" '$1==c && $3==r {print $5}' "$tsv" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
			[ "$r" = raw ] && rawcpu=$cpu rawrss=$rss
			awk -v c="$c" -v r="$r" -v cpu="$cpu" -v rss="$rss" -v rc="$rawcpu" -v rr="$rawrss" \
				'BEGIN {printf "c=%-4s %-18s %6d µs  %.2f×  %7.1f KiB  %+6.1f\n", c, r, cpu, cpu/rc, rss, rss-rr}'
		done
	done
	;;
heap)
	n=${1:-100}
	[ $# -gt 0 ] && shift
	set -- "${@:-raw stream/openai}"
	export LOAD_INTERVAL=${LOAD_INTERVAL:-300ms}
	measuring
	for route in $*; do
		# Every allocation sampled (memprofilerate=1): exact bytes by owner.
		GODEBUG=memprofilerate=1 "$caddy" run --config examples/load/streams.Caddyfile >"$out/gateway.log" 2>&1 &
		gateway_pid=$!
		wait_port 127.0.0.1:8490
		"${load[@]}" -url "$(proto_of "$route")=$gw/$route" -n 10 -c 5 -quiet >/dev/null
		f="$out/heap-${route//\//_}"
		curl -s -o "$f.base" "http://127.0.0.1:8490/debug/pprof/heap?gc=1"
		"${load[@]}" -url "$(proto_of "$route")=$gw/$route" -c "$n" -n "$n" -ramp 2s -quiet >/dev/null &
		lp=$!
		sleep "${HOLD:-10}"
		curl -s -o "$f.heap" "http://127.0.0.1:8490/debug/pprof/heap?gc=1"
		open=$(curl -s "$metrics" | sed -n 's/^go_goroutines \(.*\)/\1/p')
		wait "$lp"
		gateway_off
		echo
		echo "=== /$route: in-use heap with $n streams open minus before ($open goroutines), by allocation site; divide by $n"
		go tool pprof -sample_index=inuse_space -top -nodecount="${TOP:-20}" -base "$f.base" "$f.heap" 2>/dev/null | sed -n '/^Showing nodes/,$p'
	done
	;;
ci)
	up
	faults 1
	cleanup
	export LOAD_INTERVAL=100ms
	up
	step "streams: 1000 paced streams at once (deltas every $LOAD_INTERVAL)" \
		-url "$gw/stream/openai" -c 1000 -n 1000 -ramp 5s -sample 2s -timeout 2m -leftovers 30s -slack 30
	step "soak (short): every protocol in rotation, 30 streams a second for 60s" \
		-url "$(routes stream)" -rate 30 -c 1000 -duration 60s -sample 10s -check -leftovers 30s
	;;
*)
	sed -n '2,20p' "$0"
	exit 2
	;;
esac

echo
if [ "$failures" -gt 0 ]; then
	echo "$failures of the runs failed their checks" >&2
	exit 1
fi
echo "every run passed its checks"
