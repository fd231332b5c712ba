"""Sandbox.run: output, exit statuses, input, the options seen from inside,
and the report's fields."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import assert_fields
from nanobox import MB, Permission, Report, Result, SandboxBuilder

PATH = "/usr/local/bin:/usr/bin:/bin"


def sh(b: SandboxBuilder, script: str, **kw: object) -> Result:
    return b.env("PATH", PATH).build().run("sh", ["-c", script], **kw)  # type: ignore[arg-type]


def test_stdout_stderr_exit_code(builder: SandboxBuilder) -> None:
    r = sh(builder, "echo out; echo err >&2; exit 3")
    assert (r.stdout, r.stderr, r.exit_code, r.signal) == ("out\n", "err\n", 3, None)
    assert (r.stdout_bytes, r.stderr_bytes) == (b"out\n", b"err\n")
    assert not r.success and r.status == "exited" and r.report.exit_code == 3
    ok = sh(builder, "true")
    assert ok.success and ok.status == "ok" and ok.exit_code == 0


def test_signal(builder: SandboxBuilder) -> None:
    # A fault (the program is pid 1 of its pid namespace, which ignores the
    # signals that are not forced on it).
    r = builder.env("PATH", PATH).build().run("perl", ["-e", 'unpack "p", pack "L!", 1'])
    assert (r.exit_code, r.signal, r.status, r.report.signal_name) == (139, 11, "signaled", "SIGSEGV")


def test_input_and_binary_output(builder: SandboxBuilder) -> None:
    sb = builder.env("PATH", PATH).build()
    assert sb.run("cat", input="line one\nline two\n").stdout == "line one\nline two\n"
    data = bytes(range(256)) * 1024
    r = sb.run("cat", input=data)
    assert r.stdout_bytes == data
    assert "\ufffd" in r.stdout  # undecodable bytes replaced in the str form
    # Without input the program's stdin is empty (/dev/null).
    assert sb.run("cat").stdout == ""
    # More input than a pipe holds, with the program writing at once: no
    # deadlock between the two.
    big = b"x" * (4 * MB)
    r = sb.run("sh", ["-c", "cat; echo done >&2"], input=big)
    assert len(r.stdout_bytes) == len(big) and r.stderr == "done\n"


def test_timeout_is_a_wall_time_limit(builder: SandboxBuilder) -> None:
    sb = builder.build()
    r = sb.run("sleep", ["30"], timeout=0.3)
    assert r.status == "wall-timeout" and r.exit_code == 137 and r.signal == 9
    assert r.report.killed and r.report.limits["wallTime"].hit
    assert r.report.limits["wallTime"].requested == 0.3
    # The timeout tightens the sandbox's own limit, never loosens it.
    tight = builder.wall_time_limit(0.2).build()
    assert tight.run("sleep", ["30"], timeout=60).report.limits["wallTime"].requested == 0.2


def test_what_the_program_sees(builder: SandboxBuilder, shared_dir: Path, tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "file").write_text("read me\n")
    b = (
        builder.mount(str(ro), "/ro", Permission.ReadOnly)
        .mount(str(shared_dir), "/rw", Permission.ReadWrite)
        .tmpfs("/scratch", size=MB)
        .working_dir("/scratch")
        .env("GREETING", "hi there")
        .hostname("pybox")
        .user(1234, 4321)
    )
    r = sh(
        b,
        'cat /ro/file; touch /ro/x 2>/dev/null || echo ro-refused; echo w >/rw/out; pwd; '
        'echo "$GREETING"; hostname; id -u; id -g; df -k /scratch | tail -1 | awk "{print \\$2}"; '
        'env | grep -c . ; test -s /etc/shadow && echo SHADOW-VISIBLE; true',
    )
    assert r.success, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:8] == ["read me", "ro-refused", "/scratch", "hi there", "pybox", "1234", "4321", "1024"]
    # Only the environment given (PATH, GREETING, and the HOME the runtime adds).
    assert int(lines[8]) <= 4
    assert "SHADOW-VISIBLE" not in r.stdout
    assert (shared_dir / "out").read_text() == "w\n"
    assert (shared_dir / "out").stat().st_uid == os.geteuid()


def test_no_network_by_default(builder: SandboxBuilder) -> None:
    r = sh(builder, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '")
    assert r.stdout.split() == ["lo"]
    assert r.report.isolation.network == "none"


def test_report_has_every_field_of_the_json(builder: SandboxBuilder) -> None:
    """The Report dataclasses have exactly the fields the runtime writes."""
    r = sh(builder.wall_time_limit(30).open_files_limit(64).output_limit(MB), "echo hi")
    rep = r.report

    assert_fields(rep, rep.raw, "report")
    assert_fields(rep.isolation, rep.raw["isolation"], "isolation")
    for name, lim in rep.raw["limits"].items():
        assert_fields(rep.limits[name], lim, f"limits.{name}")
    assert rep.version == 1 and rep.id.startswith("sb-") and rep.status == "ok"
    assert rep.wall_time > 0 and rep.peak_memory > 0 and rep.peak_memory_source
    assert rep.output_bytes == 3
    assert rep.limits["openFiles"].enforced and rep.limits["openFiles"].mechanism == "RLIMIT_NOFILE"
    assert rep.isolation.rootless == (os.geteuid() != 0)
    assert isinstance(Report.from_json(rep.raw), Report)
