"""The package as installed: typed (py.typed, mypy --strict clean)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import nanobox

REPO = Path(__file__).resolve().parents[2]


def test_installed_with_py_typed() -> None:
    pkg = Path(nanobox.__file__).parent
    assert (pkg / "py.typed").is_file()
    if os.environ.get("NANOBOX_TEST_INSTALLED"):
        # run-tests.sh installs the package with pip: the tests must not
        # be reading the source tree instead.
        assert REPO / "python" / "src" not in pkg.parents


def test_mypy_strict() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (Debian: apt-get install python3-mypy)")
    targets = [str(Path(nanobox.__file__).parent), str(REPO / "examples" / "python")]
    p = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", os.devnull, *targets],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert p.returncode == 0, p.stdout.decode()
