"""The builder writes the sandbox contract's options, exactly: every
method's JSON, and a round trip through nanobox-runc (--print-options),
which rejects any field it does not know."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict

import pytest

from conftest import BINARY
from nanobox import GB, KB, MB, Limit, Permission, Sandbox, SandboxBuilder


def every_option(tmp: Path) -> SandboxBuilder:
    return (
        Sandbox.builder()
        .rootfs(str(tmp))
        .mount(str(tmp / "in"), "/input", Permission.ReadOnly)
        .mount(str(tmp / "out"), "/output", Permission.ReadWrite)
        .tmpfs("/scratch", size=64 * MB)
        .tmpfs("/empty", read_only=True)
        .working_dir("/scratch")
        .env("A", "1")
        .envs({"B": "2", "A": "3"})
        .hostname("box")
        .user(1000, 100, umask=0o22)
        .memory_limit(256 * MB)
        .cpu_limit(1.5)
        .pids_limit(64)
        .wall_time_limit(timedelta(seconds=1, milliseconds=500))
        .cpu_time_limit(0.25)
        .open_files_limit(128)
        .file_size_limit(16 * MB)
        .output_limit(1 * MB)
        .allow_degraded(Limit.MEMORY, Limit.PIDS, Limit.MEMORY)
        .host_network()
        .seccomp("strict")
        .landlock(read_only=["/usr"], read_write=["/tmp"], restrict_network=True, allow_connect=[443])
        .host_ids(60000, 60000)
        .state_root(str(tmp / "state"))
    )


def test_every_method_writes_the_contract(tmp_path: Path) -> None:
    o = every_option(tmp_path).options()
    assert o == {
        "version": 1,
        "rootfs": str(tmp_path),
        "mounts": [
            {"source": str(tmp_path / "in"), "target": "/input", "readOnly": True},
            {"source": str(tmp_path / "out"), "target": "/output"},
        ],
        "tmpfs": [{"target": "/scratch", "size": 64 * MB}, {"target": "/empty", "readOnly": True}],
        "workDir": "/scratch",
        "env": ["B=2", "A=3"],
        "hostname": "box",
        "user": {"uid": 1000, "gid": 100, "umask": 0o22},
        "limits": {
            "memory": 268435456, "cpus": 1.5, "pids": 64, "wallTime": 1.5, "cpuTime": 0.25,
            "openFiles": 128, "fileSize": 16 * MB, "output": MB,
        },
        "allowDegraded": ["memory", "pids"],
        "network": {"mode": "host"},
        "seccomp": "strict",
        "landlock": {"readOnly": ["/usr"], "readWrite": ["/tmp"], "restrictNetwork": True, "allowConnect": [443]},
        "namespaces": {"hostUID": 60000, "hostGID": 60000},
        "stateRoot": str(tmp_path / "state"),
    }
    assert (KB, MB, GB) == (1024, 1024 ** 2, 1024 ** 3)


def print_options(o: Dict[str, Any], tmp: Path) -> Dict[str, Any]:
    f = tmp / "opts.json"
    f.write_text(json.dumps(o))
    p = subprocess.run([BINARY, "sandbox", "--options", str(f), "--print-options"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    back: Dict[str, Any] = json.loads(p.stdout)
    return back


def test_round_trip_through_the_runtime(tmp_path: Path) -> None:
    """What the builder writes is what Go's Options read and write back:
    same fields, same values, nothing dropped or unknown."""
    o = every_option(tmp_path).options()
    assert print_options(o, tmp_path) == o
    custom = {"defaultAction": "errno", "defaultErrno": 1, "syscalls": [{"names": ["read", "write"], "action": "allow"}]}
    o = Sandbox.builder().seccomp(custom).no_network().options()
    assert o["seccomp"] == {"profile": custom}
    back = print_options(o, tmp_path)
    assert back["seccomp"]["profile"]["syscalls"][0]["names"] == ["read", "write"]
    assert back["network"] == {"mode": "none"}
    o = (
        Sandbox.builder().allow_network(["api.example.com"]).deny_network(["*.evil.example"])
        .add_host("api.example.com", "127.0.0.2").allow_private_targets().options()
    )
    assert o["network"] == {
        "mode": "allowlist", "allow": ["api.example.com"], "deny": ["*.evil.example"],
        "hosts": {"api.example.com": "127.0.0.2"}, "allowPrivateTargets": True,
    }
    assert print_options(o, tmp_path) == o


def test_presets_are_the_runtimes(tmp_path: Path) -> None:
    """A preset builder starts from the runtime's own preset options."""
    sub = tmp_path / "sub"
    sub.mkdir()
    p = subprocess.run([BINARY, "sandbox", "--preset", f"code-judge={sub}", "--print-options"], stdout=subprocess.PIPE, check=True)
    assert Sandbox.code_judge(str(sub)).options() == json.loads(p.stdout)
    o = Sandbox.code_judge(str(sub)).memory_limit(64 * MB).env("PATH", "/bin").options()
    assert o["limits"]["memory"] == 64 * MB and o["limits"]["pids"] == 64
    assert [e for e in o["env"] if e.startswith("PATH=")] == ["PATH=/bin"]
    assert o["mounts"] == [{"source": str(sub), "target": "/submission", "readOnly": True}]
    a = Sandbox.data_analysis(str(tmp_path / "i"), str(tmp_path / "o")).options()
    assert [m["target"] for m in a["mounts"]] == ["/input", "/output"]


def test_relative_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    o = Sandbox.builder().mount("data", "/data", Permission.READ_ONLY).state_root("st").options()
    assert o["mounts"][0]["source"] == os.path.join(str(tmp_path), "data")
    assert o["stateRoot"] == os.path.join(str(tmp_path), "st")
    assert Sandbox.agent_executor("ws").options()["mounts"][0]["source"] == os.path.join(str(tmp_path), "ws")


def test_builder_type_errors() -> None:
    b = Sandbox.builder()
    with pytest.raises(TypeError):
        b.memory_limit("128M")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.wall_time_limit("30s")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.mount("/a", "/b", "ro")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.allow_network("example.com")
    with pytest.raises(ValueError):
        b.env("A=B", "c")
