// Run analysis code over a data set with the data-analysis preset: the
// input read-only, the output read-write, no network.
//
//     node examples/js/data_analysis.mjs
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "../../js/src/index.js";

const SCRIPT = `
total=0; n=0
while IFS=, read -r city temp; do
    [ "$city" = city ] && continue
    total=$((total + temp)); n=$((n + 1))
done </input/temperatures.csv
echo "mean $((total / n)) over $n cities" >/output/summary.txt
touch /input/tampered 2>/dev/null && echo "input is writable!" >&2
exit 0
`;

const inp = mkdtempSync(join(tmpdir(), "analysis-in-"));
const out = mkdtempSync(join(tmpdir(), "analysis-out-"));
try {
  chmodSync(inp, 0o755);
  writeFileSync(join(inp, "temperatures.csv"), "city,temp\nOslo,4\nLima,19\nPerth,25\n");
  const sandbox = await Sandbox.dataAnalysis(inp, out).build();
  const res = await sandbox.run("sh", ["-c", SCRIPT]);
  console.log(`status ${res.status}, stderr ${JSON.stringify(res.stderr)}`);
  process.stdout.write("output: " + readFileSync(join(out, "summary.txt"), "utf8"));
  for (const name of ["memory", "pids"]) {
    const lim = res.report.limits[name];
    console.log(`limit ${name}: ${lim.status} by ${lim.mechanism}`);
  }
} finally {
  rmSync(inp, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
}
