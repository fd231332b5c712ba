"""The Python examples (examples/python), run as they are shipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from conftest import cgroup_enforces

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


@pytest.mark.parametrize(
    "name,want",
    [
        ("demo.py", ["in a sandbox", "status ok"]),
        ("code_judge.py", ["case 1: AC", "case 2: AC", "case 3: TLE"]),
        ("data_analysis.py", ["output: mean 16 over 3 cities"]),
        ("agent_composed.py", ["lint: calc.py looks fine", "Read-only file system", "wall-timeout", "no hook was planted"]),
        ("spawn_demo.py", ["hello from sandbox", "42", "shell: exited, exit 3", "sleeper: cancelled (killed: True)"]),
    ],
)
def test_example(name: str, want: List[str], tmp_path: Path) -> None:
    args = [sys.executable, str(EXAMPLES / name)]
    if name == "code_judge.py" and not cgroup_enforces("memory"):
        # The judge's limits fail closed without a cgroup...
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        assert p.returncode == 1 and b"limits.memory" in p.stderr, p.stderr
        # ...unless their degradation is allowed.
        args.append("--allow-degraded")
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path, env=dict(os.environ, TMPDIR=str(tmp_path)))
    out = p.stdout.decode()
    assert p.returncode == 0, out
    for w in want:
        assert w in out, f"{name}: no {w!r} in:\n{out}"
