"""Each preset, run for real: what its program may and may not do."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cgroup_enforces
from nanobox import LimitUnavailableError, Sandbox, SandboxBuilder


def test_agent_executor(tmp_path: Path, state_root: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "main.py").write_text("print('from the workspace')\n")
    sb = Sandbox.agent_executor(str(ws)).state_root(str(state_root)).build()
    r = sb.run("sh", ["-c", """
        bad() { echo "BAD: $*"; }
        [ "$(pwd)" = /workspace ] || bad pwd $(pwd)
        python3 main.py
        echo made >new-file || bad workspace not writable
        echo 'echo pwned' >.git/hooks/pre-commit 2>/dev/null && bad hook planted
        echo '[core] hooksPath=/tmp' >>.git/config 2>/dev/null && bad config changed
        mv .git .git-old 2>/dev/null && bad .git moved
        touch /usr/x 2>/dev/null && bad /usr writable
        touch /etc/x 2>/dev/null && bad /etc writable
        echo done
    """])
    assert r.success, r.stderr
    assert r.stdout == "from the workspace\ndone\n"
    assert (ws / "new-file").read_text() == "made\n"
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert r.report.isolation.network == "none"
    # Memory and processes may degrade where this caller has no cgroup:
    # the report says how.
    for name in ("memory", "pids"):
        assert r.report.limits[name].status == ("enforced" if cgroup_enforces(name) else "degraded")


def test_agent_executor_allow_network(tmp_path: Path, state_root: Path) -> None:
    """The issue's allow_network example: the preset with an allowlist."""
    sb = Sandbox.agent_executor(str(tmp_path)).state_root(str(state_root)).allow_network(["api.github.com", "*.amazonaws.com"]).build()
    r = sb.run("true")
    assert r.success and r.report.isolation.network == "allowlist"
    assert r.report.network is not None and r.report.network.allow == ("api.github.com", "*.amazonaws.com")


def judge(sub: Path, state_root: Path) -> SandboxBuilder:
    b = Sandbox.code_judge(str(sub)).state_root(str(state_root))
    if cgroup_enforces("memory"):
        return b
    # Strict limits fail closed: without a cgroup, memory, pids and CPUs
    # are refused, all named...
    with pytest.raises(LimitUnavailableError) as e:
        b.build()
    assert set(e.value.limits) == {"memory", "pids", "cpus"}
    assert e.value.report is not None and e.value.report.error_kind == "limit-unavailable"
    # ...until their degradation is allowed.
    return b.allow_degraded("memory", "pids", "cpus")


def test_code_judge(tmp_path: Path, state_root: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "main.sh").write_text("read a b; echo $((a + b))\n")
    sb = judge(sub, state_root).build()
    r = sb.run("sh", ["/submission/main.sh"], input="40 2\n")
    assert r.success and r.stdout == "42\n", r.stderr
    r = sb.run("sh", ["-c", """
        touch /submission/x 2>/dev/null && echo submission-writable
        [ "$(hostname)" = judge ] || echo hostname
        perl -e 'exit(syscall(101, 0, 0, 0, 0) == -1 ? 0 : 1)' || echo ptrace-allowed
        echo scratch >/tmp/s && cat /tmp/s
    """])
    assert r.stdout == "scratch\n", r.stdout + r.stderr
    rep = r.report
    assert rep.isolation.seccomp == "strict" and rep.isolation.network == "none"
    assert rep.limits["wallTime"].requested == 10 and rep.limits["cpuTime"].requested == 5
    # A submission that loops is stopped by the judge's CPU time limit
    # (lowered from the preset's 5 s to keep the test short).
    r = judge(sub, state_root).cpu_time_limit(0.5).build().run("sh", ["-c", "while :; do :; done"])
    # (As root a cgroup measures the CPU time and the runtime kills the
    # sandbox; rootless here the kernel's RLIMIT_CPU kills the process.)
    assert r.status in ("cpu-timeout", "wall-timeout"), r.report
    hit = "cpuTime" if r.status == "cpu-timeout" else "wallTime"
    assert r.report.limits[hit].hit and not r.success, r.report


def test_data_analysis(tmp_path: Path, state_root: Path) -> None:
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.mkdir()
    out.mkdir()
    (inp / "data.csv").write_text("x\n1\n2\n3\n")
    sb = Sandbox.data_analysis(str(inp), str(out)).state_root(str(state_root)).build()
    r = sb.run("python3", ["-c", """
import os
rows = open('/input/data.csv').read().split()[1:]
open('result.txt', 'w').write(str(sum(map(int, rows))) + '\\n')
try:
    open('/input/x', 'w')
    print('input writable')
except OSError:
    pass
print(os.getcwd())
"""])
    assert r.success, r.stderr
    assert r.stdout == "/output\n"
    assert (out / "result.txt").read_text() == "6\n"
    assert not (inp / "x").exists()
