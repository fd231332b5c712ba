// Each preset, run for real: what its program may and may not do.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupEnforces, SKIP, stateRoot, tempDir } from "./helpers.js";
import { LimitUnavailableError, Sandbox } from "../src/index.js";

test("agent executor", { skip: SKIP }, async (t) => {
  const ws = join(tempDir(t), "ws");
  mkdirSync(join(ws, ".git", "hooks"), { recursive: true });
  writeFileSync(join(ws, ".git", "config"), "[core]\n");
  const sb = await Sandbox.agentExecutor(ws).stateRoot(stateRoot(t)).build();
  const r = await sb.run("sh", ["-c", `
    bad() { echo "BAD: $*"; }
    [ "$(pwd)" = /workspace ] || bad pwd
    echo made >new-file || bad workspace not writable
    echo 'echo pwned' >.git/hooks/pre-commit 2>/dev/null && bad hook planted
    echo '[core] hooksPath=/tmp' >>.git/config 2>/dev/null && bad config changed
    touch /usr/x 2>/dev/null && bad /usr writable
    echo done`]);
  assert.ok(r.success, r.stderr);
  assert.equal(r.stdout, "done\n");
  assert.equal(readFileSync(join(ws, "new-file"), "utf8"), "made\n");
  assert.ok(!existsSync(join(ws, ".git", "hooks", "pre-commit")));
  for (const n of ["memory", "pids"]) {
    assert.equal(r.report.limits[n].status, cgroupEnforces(n) ? "enforced" : "degraded");
  }
});

test("agent executor with an allowlist (the issue's example)", { skip: SKIP }, async (t) => {
  const sb = await Sandbox.agentExecutor(tempDir(t)).stateRoot(stateRoot(t)).allowNetwork(["api.github.com", "*.amazonaws.com"]).build();
  const r = await sb.run("true");
  assert.equal(r.report.isolation.network, "allowlist");
  assert.deepEqual(r.report.network.allow, ["api.github.com", "*.amazonaws.com"]);
});

async function judge(t, sub, root) {
  const b = Sandbox.codeJudge(sub).stateRoot(root);
  if (cgroupEnforces("memory")) return b;
  await assert.rejects(b.build(), (e) => e instanceof LimitUnavailableError && [...e.limits].sort().join() === "cpus,memory,pids");
  return b.allowDegraded("memory", "pids", "cpus");
}

test("code judge", { skip: SKIP }, async (t) => {
  const sub = join(tempDir(t), "sub");
  mkdirSync(sub);
  writeFileSync(join(sub, "main.sh"), "read a b; echo $((a + b))\n");
  const root = stateRoot(t);
  const sb = await (await judge(t, sub, root)).build();
  const r = await sb.run("sh", ["/submission/main.sh"], { input: "40 2\n" });
  assert.equal(r.stdout, "42\n", r.stderr);
  const c = await sb.run("sh", ["-c", "touch /submission/x 2>/dev/null && echo writable; hostname"]);
  assert.equal(c.stdout, "judge\n");
  assert.equal(c.report.isolation.seccomp, "strict");
  const loop = await (await (await judge(t, sub, root)).cpuTimeLimit(0.5).build()).run("sh", ["-c", "while :; do :; done"]);
  // As root a cgroup measures the CPU time and the runtime kills the
  // sandbox; rootless here the kernel's RLIMIT_CPU kills the process.
  assert.ok(["cpu-timeout", "wall-timeout"].includes(loop.status), loop.status);
  const hit = loop.status === "cpu-timeout" ? "cpuTime" : "wallTime";
  assert.ok(loop.report.limits[hit].hit && !loop.success, JSON.stringify(loop.report));
});

test("data analysis", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  const inp = join(tmp, "in");
  const out = join(tmp, "out");
  mkdirSync(inp);
  mkdirSync(out);
  writeFileSync(join(inp, "data.csv"), "x\n1\n2\n3\n");
  const sb = await Sandbox.dataAnalysis(inp, out).stateRoot(stateRoot(t)).build();
  const r = await sb.run("sh", ["-c", "tail -n +2 /input/data.csv | paste -sd+ | bc >result.txt 2>/dev/null || awk 'NR>1{s+=$1} END{print s}' /input/data.csv >result.txt; touch /input/x 2>/dev/null && echo writable; pwd"]);
  assert.equal(r.stdout, "/output\n", r.stderr);
  assert.equal(readFileSync(join(out, "result.txt"), "utf8"), "6\n");
  assert.ok(!existsSync(join(inp, "x")));
});
