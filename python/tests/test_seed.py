"""The seed example of the issue, verbatim, and the presets' examples."""

from __future__ import annotations

import pytest

from conftest import cgroup_enforces


def test_seed_example_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    from nanobox import Sandbox, Permission, MB

    def seed() -> None:
        sandbox = (Sandbox.builder()
            .working_dir("/tmp")
            .memory_limit(128 * MB)
            .build())
        result = sandbox.run("echo", ["hello"])
        print(result.stdout)

    if cgroup_enforces("memory"):
        seed()
        assert capsys.readouterr().out == "hello\n\n"
        return
    # No cgroup for this caller (an ordinary user on a cgroup v1 host): the
    # memory limit fails closed, naming the limit and the fix...
    from nanobox import LimitUnavailableError

    with pytest.raises(LimitUnavailableError) as e:
        seed()
    assert e.value.limit == "memory"
    assert "limits.memory" in str(e.value) and 'allowDegraded: ["memory"]' in e.value.fix
    assert Permission.ReadOnly.value == "ro"
    # ...and runs when its degradation is allowed, the report saying how.
    sandbox = Sandbox.builder().working_dir("/tmp").memory_limit(128 * MB).allow_degraded("memory").build()
    result = sandbox.run("echo", ["hello"])
    assert result.stdout == "hello\n"
    assert result.report.limits["memory"].status == "degraded"
    assert result.report.limits["memory"].mechanism.startswith("RLIMIT_AS")
