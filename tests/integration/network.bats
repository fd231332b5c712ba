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

# start_host_server: an HTTP/1.1 server on 127.0.0.1 (port $HPORT) that
# keeps connections alive, takes any method, splits request lines on any
# whitespace (as lenient servers do), and appends "HOST PATH" of every
# request it serves to $HOST_LOG.
start_host_server() {
	HOST_LOG="$BATS_TEST_TMPDIR/host.log"
	: >"$HOST_LOG"
	rm -f "$BATS_TEST_TMPDIR/hport"
	/usr/bin/python3 -c '
import http.server, sys
log, portfile = sys.argv[1:3]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def __getattr__(self, name):
        if name.startswith("do_"): return self.serve
        raise AttributeError(name)
    def serve(self):
        with open(log, "a") as f: f.write("%s %s\n" % (self.headers.get("Host"), self.path))
        self.send_response(200); self.send_header("Content-Length", "3"); self.end_headers(); self.wfile.write(b"ok\n")
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f: f.write(str(s.server_address[1]))
import os; os.rename(portfile + ".tmp", portfile)
s.serve_forever()' "$HOST_LOG" "$BATS_TEST_TMPDIR/hport" 3>&- &
	HOST_PID=$!
	retry 200 0.05 test -s "$BATS_TEST_TMPDIR/hport"
	HPORT=$(cat "$BATS_TEST_TMPDIR/hport")
}

@test "network: a plain-HTTP connection to an allowed name carries one request, for that name only" {
	start_host_server
	# Each is a way to ask the allowed name's server for another site
	# (domain fronting) that a lenient server would obey: a second request,
	# pipelined or kept alive; an absolute URL; a lower-case method; LF line
	# ends; an empty line first; a tab in the request line; HTTP/2.
	cat >"$BATS_TEST_TMPDIR/front.py" <<-'EOF'
		import socket, sys, time
		port = int(sys.argv[1])
		def talk(*parts):
		    s = socket.create_connection(("web.test", port), timeout=10)
		    got = b""
		    try:
		        for p in parts:
		            s.sendall(p.encode())
		            time.sleep(0.3)
		        while True:
		            b = s.recv(65536)
		            if not b: break
		            got += b
		    except OSError as e:
		        got += b" [" + type(e).__name__.encode() + b"]"
		    s.close()
		    return got.decode(errors="replace").replace("\r", "").replace("\n", " ")
		H = "Host: web.test\r\n"
		E = "Host: evil.test\r\n"
		print("pipelined:", talk("GET /ok1 HTTP/1.1\r\n" + H + "\r\nGET /evil-pipelined HTTP/1.1\r\n" + E + "\r\n"))
		print("keepalive:", talk("GET /ok2 HTTP/1.1\r\n" + H + "\r\n", "GET /evil-keepalive HTTP/1.1\r\n" + E + "\r\n"))
		print("absolute:", talk("GET http://evil.test/evil-absolute HTTP/1.1\r\n" + H + "\r\n"))
		print("lowercase:", talk("get /evil-lowercase HTTP/1.1\r\n" + E + "\r\n"))
		print("lf:", talk("GET /evil-lf HTTP/1.1\nHost: evil.test\n\n"))
		print("emptyline:", talk("\r\nGET /evil-emptyline HTTP/1.1\r\n" + E + "\r\n"))
		print("tab:", talk("GET\t/evil-tab HTTP/1.1\r\n" + E + "\r\n"))
		print("http2:", talk("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	EOF
	chmod 0644 "$BATS_TEST_TMPDIR/front.py"
	sbx "${NET[@]}" --allow-net "web.test:$HPORT" --add-host web.test:127.0.0.1 \
		--mount "$BATS_TEST_TMPDIR/front.py:/front.py:ro" -- /bin/sh -c "
		/usr/bin/python3 /front.py $HPORT
		curl -sS --max-time 20 --noproxy '*' http://web.test:$HPORT/ok3 --next --noproxy '*' -H 'Host: evil.test' http://web.test:$HPORT/evil-next"
	kill "$HOST_PID"
	cat "$HOST_LOG"
	# The server saw the allowed requests, and nothing for evil.test.
	grep -qx "web.test /ok1" "$HOST_LOG"
	grep -qx "web.test /ok2" "$HOST_LOG"
	grep -qx "web.test:$HPORT /ok3" "$HOST_LOG"
	! grep -q evil "$HOST_LOG"
	[[ "$out" == *"pipelined: HTTP/1.1 200 OK"* && "$out" == *"keepalive: HTTP/1.1 200 OK"* ]]
	[[ "$err" == *"network: denied evil.test:$HPORT (connect): the HTTP Host \\\"evil.test\\\" does not match web.test"* ]]
}

@test "network: an address written where a name goes is not a name, whatever the rules" {
	sbx "${NET[@]}" --allow-net "*:$PORT" --deny-net evil.test -- /bin/sh -c "
		curl -s --max-time 20 --noproxy '' -w ' %{http_code}' http://127.0.0.1:$PORT/literal-proxy; echo
		curl -s --max-time 20 --noproxy '*' http://127.0.0.1.:$PORT/literal-direct; echo \" direct \$?\"
		curl -s --max-time 20 --noproxy '*' http://2130706433:$PORT/literal-decimal; echo \" decimal \$?\""
	[[ "$out" == *"addresses are never reached directly"*" 403"* ]]
	[[ "$out" == *" direct "* && "$out" != *"direct 0"* && "$out" == *" decimal "* && "$out" != *"decimal 0"* ]]
	! grep -q literal "$SERVER_LOG"
}

@test "network: the host's search domains do not turn an allowed name into another" {
	[[ $EUID -eq 0 ]] || skip "needs root for a private mount namespace with another /etc/resolv.conf"
	# A resolver on the host's loopback (127.53.0.1: systemd-resolved
	# takes 127.0.0.53 and .54) that knows only NAME.corp.test.
	cat >"$BATS_TEST_TMPDIR/dns.py" <<-'EOF'
		import os, socket, struct, sys
		def ready(why):
		    with open(sys.argv[1] + ".tmp", "w") as f: f.write(why)
		    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		try:
		    s.bind(("127.53.0.1", 53))
		except OSError as e:
		    ready(str(e))
		    sys.exit(1)
		ready("")
		while True:
		    d, a = s.recvfrom(4096)
		    i, labels = 12, []
		    while d[i]:
		        labels.append(d[i + 1:i + 1 + d[i]].decode()); i += 1 + d[i]
		    q, name = d[12:i + 5], ".".join(labels).lower()
		    with open(sys.argv[2], "a") as f: f.write(name + "\n")
		    if name.endswith(".corp.test") and struct.unpack(">H", d[i + 1:i + 3])[0] == 1:
		        r = d[:2] + b"\x81\x80" + struct.pack(">HHHH", 1, 1, 0, 0) + q + b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton("127.0.0.1")
		    else:
		        r = d[:2] + b"\x81\x83" + struct.pack(">HHHH", 1, 0, 0, 0) + q
		    s.sendto(r, a)
	EOF
	/usr/bin/python3 "$BATS_TEST_TMPDIR/dns.py" "$BATS_TEST_TMPDIR/dns.ready" "$BATS_TEST_TMPDIR/dns.log" 3>&- &
	local dns=$!
	retry 100 0.05 test -e "$BATS_TEST_TMPDIR/dns.ready"
	[[ ! -s "$BATS_TEST_TMPDIR/dns.ready" ]] || skip "cannot serve DNS on 127.53.0.1:53: $(cat "$BATS_TEST_TMPDIR/dns.ready")"
	printf 'nameserver 127.53.0.1\nsearch corp.test\n' >"$BATS_TEST_TMPDIR/resolv.conf"
	status=0
	out=$(unshare -m --propagation private sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh \
		"$BATS_TEST_TMPDIR/resolv.conf" timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox \
		"${NET[@]}" --allow-net "*.web.test:$PORT" -- /bin/sh -c \
		"curl -s --max-time 20 --noproxy '*' http://internal.web.test:$PORT/search; echo \" direct \$?\"" 2>&1 3>&-) || status=$?
	kill "$dns"
	echo "$out"
	cat "$BATS_TEST_TMPDIR/dns.log"
	# The relay asked for the name as given, and never for it below a
	# search domain.
	grep -qx internal.web.test "$BATS_TEST_TMPDIR/dns.log"
	! grep -q corp.test "$BATS_TEST_TMPDIR/dns.log"
	! grep -q search "$SERVER_LOG"
	[[ "$out" == *" direct "* && "$out" != *"direct 0"* ]]
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
	# It lives as long as the container: its Go heap asks for no huge
	# pages (GODEBUG=disablethp=1 in its environment; libbox/nsenter/thp.c).
	! grep -q '^VmFlags:.* hg' "/proc/$sup/smaps" || fail "the network supervisor's heap is advised MADV_HUGEPAGE"
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
