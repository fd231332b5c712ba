// The JS examples (examples/js), run as they are shipped.

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { REPO, SKIP, cgroupEnforces, tempDir } from "./helpers.js";

const EXAMPLES = join(REPO, "examples", "js");

const CASES = [
  ["demo.mjs", ["in a sandbox", "status ok"]],
  ["code_judge.mjs", ["case 1: AC", "case 2: AC", "case 3: TLE"]],
  ["data_analysis.mjs", ["output: mean 16 over 3 cities"]],
  ["agent_composed.mjs", ["lint: calc.py looks fine", "Read-only file system", "wall-timeout", "no hook was planted"]],
  ["spawn_demo.mjs", ["hello from sandbox", "42", "shell: exited, exit 3", "sleeper: cancelled (killed: true)"]],
];

for (const [name, want] of CASES) {
  test(`example ${name}`, { skip: SKIP }, (t) => {
    const tmp = tempDir(t);
    const args = [join(EXAMPLES, name)];
    const env = { ...process.env, TMPDIR: tmp };
    if (name === "code_judge.mjs" && !cgroupEnforces("memory")) {
      // The judge's limits fail closed without a cgroup...
      const p = spawnSync(process.execPath, args, { cwd: tmp, env, encoding: "utf8" });
      assert.equal(p.status, 1, p.stderr);
      assert.match(p.stderr, /limits\.memory/);
      // ...unless their degradation is allowed.
      args.push("--allow-degraded");
    }
    const p = spawnSync(process.execPath, args, { cwd: tmp, env, encoding: "utf8" });
    const out = p.stdout + p.stderr;
    assert.equal(p.status, 0, out);
    for (const w of want) assert.ok(out.includes(w), `${name}: no ${JSON.stringify(w)} in:\n${out}`);
  });
}
