"""Errors are exceptions carrying the runtime's one-line message and its
machine-readable problems, never a bare exit code."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import nanobox
from conftest import BINARY
from nanobox import (
    BinaryNotFoundError,
    ContractError,
    InvalidOptionsError,
    ProgramNotExecutableError,
    ProgramNotFoundError,
    Sandbox,
    SandboxBuilder,
    SandboxSetupError,
)


def test_binary_not_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NANOBOX_RUNC")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BinaryNotFoundError, match="nanobox-runc was not found on PATH.*NANOBOX_RUNC"):
        Sandbox.builder().build()
    monkeypatch.setenv("NANOBOX_RUNC", str(tmp_path / "nope"))
    with pytest.raises(BinaryNotFoundError, match="NANOBOX_RUNC: .*nope.* is not an executable file"):
        Sandbox.builder().build()
    # On PATH, as nanobox-runc.
    monkeypatch.delenv("NANOBOX_RUNC")
    os.symlink(BINARY, tmp_path / "nanobox-runc")
    assert Sandbox.builder().build().binary == str(tmp_path / "nanobox-runc")
    with pytest.raises(BinaryNotFoundError, match=r"binary\(\)"):
        Sandbox.builder().binary(str(tmp_path / "other")).build()


def test_invalid_options(builder: SandboxBuilder, tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionsError) as e:
        builder.mount(str(tmp_path / "missing"), "/data", nanobox.Permission.ReadOnly).build()
    err = e.value
    assert err.field == "mounts[0].source" and err.kind == "invalid-options"
    assert "create it or fix the path" in str(err) and "exit" not in str(err)
    with pytest.raises(InvalidOptionsError) as e:
        Sandbox.builder().working_dir("relative").memory_limit(-1).build()
    assert e.value.fields == ("workDir", "limits.memory")
    assert str(e.value).startswith("sandbox options: workDir: ")
    # Options that are not the contract at all.
    with pytest.raises(InvalidOptionsError, match='unknown field "limitz"'):
        Sandbox.from_options({"version": 1, "limitz": {}})
    with pytest.raises(InvalidOptionsError, match="contract version 2 is not supported"):
        Sandbox.from_options({"version": 2})


def test_program_errors(builder: SandboxBuilder, tmp_path: Path) -> None:
    sb = builder.build()
    with pytest.raises(ProgramNotFoundError) as e:
        sb.run("no-such-program")
    assert "no-such-program" in str(e.value) and e.value.report is not None
    assert e.value.report.exit_code == 127 and e.value.report.status == "setup-error"
    assert "absolute path" in e.value.fix
    with pytest.raises(ProgramNotExecutableError) as e2:
        sb.run("/etc/passwd")
    assert e2.value.report is not None and e2.value.report.exit_code == 126
    assert isinstance(e2.value, SandboxSetupError)


def test_a_runtime_that_writes_no_report(tmp_path: Path) -> None:
    """A runtime that dies without a report is a ContractError with what it
    said, not a result made up from its exit code."""
    fake = tmp_path / "nanobox-runc"
    fake.write_text("#!/bin/sh\nfor a; do [ \"$a\" = --validate ] && exit 0; done\necho 'it broke' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    sb = Sandbox.builder().binary(str(fake)).build()
    with pytest.raises(ContractError, match="exited with status 3 and wrote no report: it broke"):
        sb.run("true")
