"""Run analysis code over a data set with the data-analysis preset: the
input read-only, the output read-write, no network.

    python3 examples/python/data_analysis.py
"""

import os
import tempfile

from nanobox import Sandbox

SCRIPT = """
total=0; n=0
while IFS=, read -r city temp; do
    [ "$city" = city ] && continue
    total=$((total + temp)); n=$((n + 1))
done </input/temperatures.csv
echo "mean $((total / n)) over $n cities" >/output/summary.txt
touch /input/tampered 2>/dev/null && echo "input is writable!" >&2
exit 0
"""


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="analysis-in-") as inp, tempfile.TemporaryDirectory(prefix="analysis-out-") as out:
        os.chmod(inp, 0o755)
        with open(os.path.join(inp, "temperatures.csv"), "w") as f:
            f.write("city,temp\nOslo,4\nLima,19\nPerth,25\n")
        sandbox = Sandbox.data_analysis(inp, out).build()
        res = sandbox.run("sh", ["-c", SCRIPT])
        print(f"status {res.status}, stderr {res.stderr!r}")
        with open(os.path.join(out, "summary.txt")) as f:
            print("output:", f.read(), end="")
        for name in ("memory", "pids"):
            lim = res.report.limits[name]
            print(f"limit {name}: {lim.status} by {lim.mechanism}")


if __name__ == "__main__":
    main()
