"""Fixtures for the nanobox tests: they run real sandboxes with the
nanobox-runc at $NANOBOX_RUNC (python/run-tests.sh sets it to the
repository's build), as whichever user runs pytest (root, or an ordinary
user: run-tests.sh runs both)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
import dataclasses
import re
from typing import Any, Callable, Dict, Iterator, Mapping

import pytest

import nanobox

REPO = Path(__file__).resolve().parents[2]


def _binary() -> str:
    b = os.environ.get("NANOBOX_RUNC")
    if not b:
        built = REPO / "nanobox-runc"
        if built.is_file():
            os.environ["NANOBOX_RUNC"] = b = str(built)
    return b or ""


BINARY = _binary()
ROOTLESS = os.geteuid() != 0


def pytest_collection_modifyitems(config: Any, items: Any) -> None:
    if BINARY and os.access(BINARY, os.X_OK):
        return
    skip = pytest.mark.skip(reason="no nanobox-runc: build it (make build) or set NANOBOX_RUNC")
    for item in items:
        item.add_marker(skip)


_check: Dict[str, Any] = {}


def host_check() -> Dict[str, Any]:
    """`nanobox-runc sandbox --check` for this user, as JSON."""
    if not _check:
        p = subprocess.run([BINARY, "sandbox", "--check", "--report-format", "json"], stdout=subprocess.PIPE)
        _check.update(json.loads(p.stdout))
    return _check


def cgroup_enforces(limit: str) -> bool:
    """A cgroup enforces this limit for this caller (root, or a delegated
    cgroup v2 subtree); otherwise it is refused unless degraded."""
    return str(host_check()["limits"].get(limit, "")).startswith("enforced by cgroup")


_SECCOMP_CACHE = re.compile(r"\.seccomp-[0-9a-f]{64}")


def state_left(root: Path) -> list[str]:
    """What a state root holds besides the compiled seccomp filters the
    runtime keeps there on purpose (.seccomp-HASH): what a sandbox that
    leaves nothing behind must leave empty."""
    return sorted(n for n in os.listdir(root) if not _SECCOMP_CACHE.fullmatch(n))


@pytest.fixture
def state_root(tmp_path: Path) -> Iterator[Path]:
    """A state root of the test's own; the test fails if a sandbox's state
    directory is left in it."""
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    yield root
    left = state_left(root)
    assert not left, f"sandbox state left behind: {left}"


@pytest.fixture
def builder(state_root: Path) -> nanobox.SandboxBuilder:
    """Sandbox.builder() with the test's state root."""
    return nanobox.Sandbox.builder().state_root(str(state_root))


@pytest.fixture
def shared_dir(tmp_path: Path) -> Path:
    """A directory a sandbox may write through a read-write mount."""
    d = tmp_path / "shared"
    d.mkdir()
    return d


def assert_fields(obj: Any, raw: Mapping[str, Any], where: str) -> None:
    """Every key of the JSON object raw is a field of the dataclass obj
    (in snake_case): the binding has the same fields as the JSON."""
    names = {f.name for f in dataclasses.fields(obj)}
    for key in raw:
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).lower()
        assert snake in names, f"{where}: the report's {key!r} has no field in {type(obj).__name__}"


def eventually(cond: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Poll cond until it holds, with a generous deadline (never a sleep
    standing in for an event)."""
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def running(pattern: str) -> bool:
    """pgrep -f pattern finds a process."""
    return subprocess.run(["pgrep", "-f", pattern], stdout=subprocess.DEVNULL).returncode == 0
