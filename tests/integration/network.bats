#!/usr/bin/env bats
# Network allowlists (docs/network.md), from the CLI: `sandbox --allow-net`,
# `update --allow-net` on a running sandbox and container, the
# org.nanobox.network annotation under create/start, and nothing left
# (processes, namespaces, supervisors) when a sandbox ends, also after
# kill -9 of the runtime. The servers are on the host's 127.0.0.1; names
# map to them with --add-host / the annotation's "hosts", so the tests need
# --allow-private-targets. The Go tests (libbox/sandbox_network_linux_test.go)
# cover HTTPS, SNI and the report in detail.

load helpers

setup() {
	setup_test
	requires nanobox
	[[ -x /usr/bin/curl && -x /usr/bin/python3 ]] || skip "test needs /usr/bin/curl and /usr/bin/python3 (the sandbox sees the host's /usr)"
	start_server
}

teardown() {
	teardown_test
}

# start_server: an HTTP server on 127.0.0.1 (port $PORT) that appends the
# path of every request to $SERVER_LOG and serves $SERVER_DIR.
start_server() {
	SERVER_DIR="$BATS_TEST_TMPDIR/www"
	SERVER_LOG="$BATS_TEST_TMPDIR/server.log"
	mkdir -p "$SERVER_DIR"
	echo "hello from the host" >"$SERVER_DIR/hello"
	: >"$SERVER_LOG"
	rm -f "$BATS_TEST_TMPDIR/port"
	/usr/bin/python3 -c '
import http.server, sys, functools
log, portfile, root = sys.argv[1:4]
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        with open(log, "a") as f: f.write(self.path + "\n")
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=root))
with open(portfile + ".tmp", "w") as f: f.write(str(s.server_address[1]))
import os; os.rename(portfile + ".tmp", portfile)
s.serve_forever()' "$SERVER_LOG" "$BATS_TEST_TMPDIR/port" "$SERVER_DIR" 3>&- &
	SERVER_PID=$!
	retry 200 0.05 test -s "$BATS_TEST_TMPDIR/port"
	PORT=$(cat "$BATS_TEST_TMPDIR/port")
}

# sbx ARGS...: `nanobox-runc sandbox` as the test's user, with the test's
# state root; sets $status, $out (stdout), $err (stderr).
sbx() {
	status=0
	timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox "$@" \
		</dev/null >"$BATS_TEST_TMPDIR/sb.out" 2>"$BATS_TEST_TMPDIR/sb.err" 3>&- || status=$?
	out=$(cat "$BATS_TEST_TMPDIR/sb.out")
	err=$(cat "$BATS_TEST_TMPDIR/sb.err")
	echo "\$ nanobox-runc sandbox $* (status $status)"
	echo "stdout: $out"
	echo "stderr: $err"
}

# netns_users NS: pids of processes in the network namespace NS ("net:[N]").
netns_users() {
	local p
	for p in /proc/[0-9]*; do
		[[ "$(readlink "$p/ns/net" 2>/dev/null)" == "$1" ]] && echo "${p#/proc/}"
	done
	return 0
}

# pid_gone PID: PID has exited (a zombie not reaped yet counts as gone).
pid_gone() {
	! kill -0 "$1" 2>/dev/null || grep -qs '^State:.*Z' "/proc/$1/status"
}

NET=(--allow-private-targets)

@test "network: --allow-net reaches an allowed name through the proxy and transparently, and nothing else" {
	sbx "${NET[@]}" --allow-net "web.test:$PORT" --add-host web.test:127.0.0.1 --report "$BATS_TEST_TMPDIR/r.json" -- /bin/sh -c "
		curl -sS --max-time 20 http://web.test:$PORT/hello
		curl -sS --max-time 20 --noproxy '*' http://web.test:$PORT/hello
		curl -s --max-time 20 http://evil.test:$PORT/evil-proxy
		curl -s --max-time 20 --noproxy '*' http://evil.test:$PORT/evil-direct; echo \"evil-direct \$?\"
		curl -s --max-time 20 --noproxy '*' http://127.0.0.1:$PORT/loopback; echo \"loopback \$?\"
		cat /etc/resolv.conf /etc/hosts; env | grep -i '^https_proxy='"
	[[ $status -eq 0 ]]
	[[ "$(grep -c '^hello from the host$' <<<"$out")" == 2 ]]
	[[ "$out" == *"evil.test:$PORT is not allowed: no allow rule matches it"* ]]
	[[ "$out" == *"evil-direct 6"* ]]
	[[ "$out" != *"loopback 0"* ]]
	[[ "$out" == *"nameserver 127.0.0.53"* && "$out" == *"HTTPS_PROXY=http://127.0.0.1:3128"* ]]
	# The server saw the two allowed requests only.
	[[ "$(cat "$SERVER_LOG")" == "/hello"$'\n'"/hello" ]]
	# Each denial is logged on stderr, and in the report.
	[[ "$err" == *"network: denied evil.test:$PORT (proxy)"* && "$err" == *"network: denied evil.test (dns)"* ]]
	jq -e '.isolation.network == "allowlist" and .network.connections["web.test"] == 2' "$BATS_TEST_TMPDIR/r.json"
	jq -e '[.network.denied[] | select(.name == "evil.test")] | length >= 2' "$BATS_TEST_TMPDIR/r.json"
	[[ -z "$(state_root_left)" ]]
}

@test "network: an allowed name that leads to loopback is refused without --allow-private-targets" {
	sbx --allow-net "web.test:$PORT" --add-host web.test:127.0.0.1 -- /bin/sh -c "curl -s --max-time 20 -w ' %{http_code}' http://web.test:$PORT/hello"
	[[ $status -eq 0 && "$out" == *"resolves to 127.0.0.1, a loopback address"*" 403" ]]
	[[ ! -s "$SERVER_LOG" ]]
}

@test "network: flags that contradict each other, and bad rules, are one-line errors" {
	sbx --network host --allow-net example.com -- true
	[[ $status -eq 125 && "$err" == *"ask for a network allowlist"* ]]
	sbx --allow-net 10.0.0.1 -- true
	[[ $status -eq 125 && "$err" == *'network.allow[0]: rule "10.0.0.1": rules name domains'* ]]
	sbx --network allowlist -- true
	[[ $status -eq 125 && "$err" == *"needs --allow-net"* ]]
}

@test "network: update --allow-net changes the rules of a running sandbox" {
	local ready="$BATS_TEST_TMPDIR/ready" go="$BATS_TEST_TMPDIR/go"
	chmod 0777 "$BATS_TEST_TMPDIR"
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox "${NET[@]}" --allow-net "web.test:$PORT" \
		--add-host web.test:127.0.0.1 --add-host late.test:127.0.0.1 --mount "$BATS_TEST_TMPDIR:/t" -- /bin/sh -c "
		curl -s --max-time 20 -o /dev/null -w 'before %{http_code}\n' http://late.test:$PORT/before
		touch /t/ready
		i=0; while [ ! -e /t/go ] && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i+1)); done
		curl -sS --max-time 20 --noproxy '*' http://late.test:$PORT/hello" \
		</dev/null >"$BATS_TEST_TMPDIR/bg.out" 2>&1 3>&- &
	RUNTIME_BG_PID=$!
	retry 600 0.05 test -e "$ready"
	local id
	id=$(cd "$ROOT" && ls -d sb-*)
	runtime update --allow-net "web.test:$PORT,late.test:$PORT" "$id"
	[[ $status -eq 0 ]]
	touch "$go"
	wait "$RUNTIME_BG_PID"
	cat "$BATS_TEST_TMPDIR/bg.out"
	grep -q "before 403" "$BATS_TEST_TMPDIR/bg.out"
	grep -q "hello from the host" "$BATS_TEST_TMPDIR/bg.out"
	[[ "$(cat "$SERVER_LOG")" == "/hello" ]]
	runtime update --allow-net x.test "$id"
	[[ $status -ne 0 ]]
}

@test "network: kill -9 of the runtime leaves no process and no network namespace" {
	chmod 0777 "$BATS_TEST_TMPDIR"
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox --allow-net "web.test:$PORT" --mount "$BATS_TEST_TMPDIR:/t" -- \
		/bin/sh -c 'readlink /proc/self/ns/net >/t/ns.tmp && mv /t/ns.tmp /t/ns; exec sleep 600' \
		</dev/null >/dev/null 2>&1 3>&- &
	RUNTIME_BG_PID=$!
	retry 600 0.05 test -s "$BATS_TEST_TMPDIR/ns"
	local ns
	ns=$(cat "$BATS_TEST_TMPDIR/ns")
	[[ -n "$(netns_users "$ns")" ]]
	kill -9 "$RUNTIME_BG_PID"
	wait "$RUNTIME_BG_PID" || true
	# init dies of its parent-death signal, the relay died with the runtime.
	retry 400 0.05 eval '[[ -z "$(netns_users "$ns")" ]]'
	[[ -z "$(netns_users "$ns")" ]]
}

@test "network: the annotation under create/start: a supervisor relays, update changes it, delete removes it" {
	local ws="$BATS_TEST_TMPDIR/ws"
	mkdir -p "$ws"
	give_to_user "$ws"
	rm -rf "$BUNDLE"
	mkdir -p "$BUNDLE"
	give_to_user "$BUNDLE"
	(cd "$BUNDLE" && as_user "$RUNTIME" spec --preset "agent-executor=$ws")
	local ann
	ann=$(jq -cn --arg p "$PORT" '{mode: "allowlist", allow: ["web.test:" + $p], allowPrivateTargets: true, hosts: {"web.test": "127.0.0.1", "late.test": "127.0.0.1"}}')
	# No cgroup limits: a rootless runtime has no cgroup on a v1 host.
	update_config 'del(.linux.resources) | .annotations["org.nanobox.network"] = $n | .process.args = ["/bin/sh", "-c", $s]' "$BUNDLE" --arg n "$ann" --arg s "
		curl -s --max-time 20 -o /dev/null -w 'before %{http_code}\n' http://late.test:$PORT/before
		touch /workspace/ready
		i=0; while [ ! -e /workspace/go ] && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i+1)); done
		curl -sS --max-time 20 --noproxy '*' http://late.test:$PORT/hello >/workspace/out 2>&1
		sleep 600"
	local log="$BATS_TEST_TMPDIR/runtime.log"
	: >"$log"
	give_to_user "$log"
	(cd "$BUNDLE" && runtime --log "$log" --log-format json create "$CID")
	[[ $status -eq 0 ]]
	local sup
	sup=$(awk '{print $1}' "$ROOT/$CID/netproxy.pid")
	[[ "$(tr '\0' ' ' </proc/$sup/cmdline)" == *"netproxy $CID"* ]]
	runtime_ok start "$CID"
	retry 600 0.05 test -e "$ws/ready"
	runtime_ok update --allow-net "web.test:$PORT" --allow-net "late.test:$PORT" "$CID"
	touch "$ws/go"
	retry 600 0.05 test -s "$ws/out"
	grep -q "hello from the host" "$ws/out"
	[[ "$(cat "$SERVER_LOG")" == "/hello" ]]
	# The first, denied, attempt is in the runtime's log as JSON.
	grep '"level":"warning"' "$log" | grep -q "late.test:$PORT (proxy)"
	local ns
	ns=$(readlink "/proc/$(container_pid "$CID")/ns/net")
	runtime_ok delete --force "$CID"
	pid_gone "$sup"
	[[ -z "$(netns_users "$ns")" ]]
	assert_nothing_left "$CID"
}

@test "network: the supervisor exits with the container's init, before any delete" {
	rm -rf "$BUNDLE"
	mkdir -p "$BUNDLE"
	give_to_user "$BUNDLE"
	(cd "$BUNDLE" && as_user "$RUNTIME" spec --preset code-judge="$BATS_TEST_TMPDIR")
	update_config 'del(.linux.resources) | .annotations["org.nanobox.network"] = "{\"mode\":\"allowlist\",\"allow\":[\"web.test\"]}" | .process.args = ["/bin/sleep", "600"]'
	(cd "$BUNDLE" && runtime create "$CID")
	[[ $status -eq 0 ]]
	local sup
	sup=$(awk '{print $1}' "$ROOT/$CID/netproxy.pid")
	kill -0 "$sup"
	runtime_ok start "$CID"
	runtime_ok kill "$CID" KILL
	retry 400 0.05 pid_gone "$sup"
	runtime_ok delete "$CID"
}

@test "network: a bundle's allowlist needs a network namespace" {
	update_config '.annotations["org.nanobox.network"] = "{\"mode\":\"allowlist\",\"allow\":[\"web.test\"]}" | .linux.namespaces |= map(select(.type != "network"))'
	runtime create -b "$BUNDLE" "$CID"
	[[ $status -ne 0 && "$output" == *"a network allowlist needs a network namespace"* ]]
	update_config '.annotations["org.nanobox.network"] = "{\"mode\":\"allowlist\",\"allow\":[\"web.test\"],\"nope\":1}"'
	runtime create -b "$BUNDLE" "$CID"
	[[ $status -ne 0 && "$output" == *'annotations[org.nanobox.network]: json: unknown field "nope"'* ]]
}
