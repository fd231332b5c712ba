"""Network policy through the binding: none by default, host, and the
allowlist (the runtime's resolver and proxy), against a server of the
test's own on 127.0.0.1."""

from __future__ import annotations

import http.server
import threading
from typing import Iterator, Tuple

import pytest

from conftest import assert_fields
from nanobox import SandboxBuilder

PATH = "/usr/local/bin:/usr/bin:/bin"

FETCH = """
import sys, urllib.request
for url in sys.argv[1:]:
    try:
        print(url, urllib.request.urlopen(url, timeout=30).read().decode())
    except Exception as e:
        print(url, "refused:", e)
"""


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Tuple[str, int]]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield "127.0.0.1", srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()


def test_allowlist(builder: SandboxBuilder, server: Tuple[str, int]) -> None:
    addr, port = server
    sb = (
        builder.env("PATH", PATH)
        .allow_network([f"svc.test:{port}"])
        .deny_network(["blocked.test"])
        .add_host("svc.test", addr)
        .add_host("blocked.test", addr)
        .allow_private_targets()
        .build()
    )
    assert sb.options["network"] == {
        "mode": "allowlist", "allow": [f"svc.test:{port}"], "deny": ["blocked.test"],
        "hosts": {"svc.test": addr, "blocked.test": addr}, "allowPrivateTargets": True,
    }
    r = sb.run("python3", ["-c", FETCH, f"http://svc.test:{port}/", f"http://blocked.test:{port}/", f"http://other.test:{port}/"])
    assert r.success, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"http://svc.test:{port}/ hello from the host"
    assert "refused" in lines[1] and "refused" in lines[2]
    net = r.report.network
    assert net is not None and r.report.isolation.network == "allowlist"
    assert net.connections == {"svc.test": 1}
    assert {d.name for d in net.denied} == {"blocked.test", "other.test"} and net.denied_total >= 2
    assert_fields(net, r.report.raw["network"], "network")
    for d, raw in zip(net.denied, r.report.raw["network"]["denied"]):
        assert_fields(d, raw, "network.denied[]")
    blocked = next(d for d in net.denied if d.name == "blocked.test")
    assert blocked.rule == "deny blocked.test" and blocked.port == port and blocked.reason


def test_private_targets_refused_unless_allowed(builder: SandboxBuilder, server: Tuple[str, int]) -> None:
    addr, port = server
    sb = builder.env("PATH", PATH).allow_network([f"svc.test:{port}"]).add_host("svc.test", addr).build()
    r = sb.run("python3", ["-c", FETCH, f"http://svc.test:{port}/"])
    assert "refused" in r.stdout, r.stdout
    assert r.report.network is not None and r.report.network.connections == {}


def test_no_network_and_host(builder: SandboxBuilder, server: Tuple[str, int]) -> None:
    addr, port = server
    url = f"http://{addr}:{port}/"
    r = builder.env("PATH", PATH).build().run("python3", ["-c", FETCH, url])
    assert "refused" in r.stdout and r.report.network is None
    r = builder.env("PATH", PATH).host_network().build().run("python3", ["-c", FETCH, url])
    assert r.stdout == f"{url} hello from the host\n" and r.report.isolation.network == "host"
