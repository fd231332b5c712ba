"""Each limit tried by a program that tries to exceed it: the result's
status and the limit's fate in the report. Where this caller has no
cgroup (an ordinary user on a cgroup v1 host) memory and pids limits fail
closed unless degradation is allowed."""

from __future__ import annotations

import pytest

from conftest import cgroup_enforces
from nanobox import KB, MB, LimitUnavailableError, SandboxBuilder
from nanobox._runtime import OutputBuffer

PATH = "/usr/local/bin:/usr/bin:/bin"


def test_wall_time(builder: SandboxBuilder) -> None:
    r = builder.wall_time_limit(0.3).build().run("sleep", ["30"])
    assert r.status == "wall-timeout" and r.report.killed
    assert r.report.limits["wallTime"].enforced and r.report.limits["wallTime"].hit


def test_cpu_time(builder: SandboxBuilder) -> None:
    r = builder.cpu_time_limit(0.5).wall_time_limit(120).build().run("sh", ["-c", "while :; do :; done"])
    assert r.status == "cpu-timeout", r.report
    assert r.report.limits["cpuTime"].hit and r.report.cpu_time >= 0.4


def test_output_limit(builder: SandboxBuilder) -> None:
    r = builder.output_limit(64 * KB).wall_time_limit(60).build().run("sh", ["-c", "while :; do echo flood; done"])
    assert r.status == "output-limit" and r.output_truncated
    assert len(r.stdout_bytes) + len(r.stderr_bytes) <= 64 * KB
    assert r.report.limits["output"].hit


def test_output_cap_without_a_limit() -> None:
    """Without an output limit a run keeps at most the cap, never more."""
    b = OutputBuffer(10)
    b.add(1, b"12345678")
    b.add(2, b"abcdef")
    b.add(1, b"zz")
    assert (b.get(1), b.get(2), b.truncated) == (b"12345678", b"ab", True)


def test_open_files(builder: SandboxBuilder) -> None:
    r = builder.open_files_limit(16).env("PATH", PATH).build().run(
        "perl", ["-e", 'my @f; while (open(my $h, "<", "/dev/null")) { push @f, $h; last if @f > 64 } print scalar(@f), " $!\\n"']
    )
    n, err = r.stdout.split(" ", 1)
    assert int(n) == 13 and "Too many open files" in err  # 16 minus stdin, stdout, stderr
    assert r.report.limits["openFiles"].enforced


def test_file_size(builder: SandboxBuilder) -> None:
    # head (a child: the program itself is pid 1, which SIGXFSZ does not
    # kill) is killed by SIGXFSZ once the file has 1 MiB.
    r = builder.file_size_limit(MB).build().run("sh", ["-c", "head -c 3000000 /dev/zero >/tmp/f; echo $?; wc -c </tmp/f"])
    assert r.stdout.split() == ["153", str(MB)]
    assert r.report.limits["fileSize"].enforced


def test_memory_hog(builder: SandboxBuilder) -> None:
    hog = ["dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"]
    if cgroup_enforces("memory"):
        r = builder.memory_limit(64 * MB).build().run(hog[0], hog[1:])
        assert r.status == "oom" and r.report.oom_killed and r.exit_code == 137
        assert r.report.limits["memory"].enforced and r.report.limits["memory"].hit
        assert r.report.peak_memory_source.startswith("cgroup")
        return
    with pytest.raises(LimitUnavailableError) as e:
        builder.memory_limit(64 * MB).build()
    assert e.value.limit == "memory" and e.value.report is not None and e.value.report.status == "setup-error"
    r = builder.memory_limit(64 * MB).allow_degraded("memory").build().run(hog[0], hog[1:])
    assert r.status == "exited" and "memory" in r.stderr
    lim = r.report.limits["memory"]
    assert lim.status == "degraded" and lim.mechanism.startswith("RLIMIT_AS") and lim.reason
    assert r.report.isolation.degraded[0].startswith("memory:")


def test_fork_bomb(builder: SandboxBuilder) -> None:
    # Bounded: at most 40 forks, each child sleeping until the sandbox ends
    # (all of them are killed with its pid namespace when the program exits).
    bomb = 'my $n = 0; for (1..40) { my $p = fork; last unless defined $p; if (!$p) { sleep 30; exit } $n++ } print "$n\\n"'
    b = builder.pids_limit(8).wall_time_limit(60).env("PATH", PATH)
    if not cgroup_enforces("pids"):
        with pytest.raises(LimitUnavailableError) as e:
            b.build()
        assert e.value.limits == ("pids",)
        b.allow_degraded("pids")
    r = b.build().run("perl", ["-e", bomb])
    assert r.success and r.stdout == "7\n", r.stderr  # 8 with the program itself
    lim = r.report.limits["pids"]
    if cgroup_enforces("pids"):
        assert lim.enforced and lim.hit
    else:
        assert lim.status == "degraded" and lim.mechanism.startswith("RLIMIT_NPROC")


def test_cpus(builder: SandboxBuilder) -> None:
    if cgroup_enforces("cpus"):
        r = builder.cpu_limit(0.5).build().run("true")
        assert r.report.limits["cpus"].enforced
        return
    with pytest.raises(LimitUnavailableError) as e:
        builder.cpu_limit(0.5).build()
    assert e.value.limit == "cpus"
    r = builder.cpu_limit(0.5).allow_degraded("cpus").build().run("true")
    assert r.report.limits["cpus"].status == "unavailable" and r.report.limits["cpus"].reason
