// Sandbox.run: output, exit statuses, input, timeouts, what the program
// sees, the report's fields.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertKeys, PATH, SKIP, stateRoot, tempDir } from "./helpers.js";
import { MB, Permission, Sandbox } from "../src/index.js";

const sandbox = (t) => Sandbox.builder().stateRoot(stateRoot(t)).env("PATH", PATH);

test("stdout, stderr, exit code", { skip: SKIP }, async (t) => {
  const sb = await sandbox(t).build();
  const r = await sb.run("sh", ["-c", "echo out; echo err >&2; exit 3"]);
  assert.deepEqual([r.stdout, r.stderr, r.exitCode, r.signal, r.status, r.success], ["out\n", "err\n", 3, null, "exited", false]);
  assert.ok(Buffer.isBuffer(r.stdoutBytes) && r.stdoutBytes.equals(Buffer.from("out\n")));
  const ok = await sb.run("true");
  assert.ok(ok.success && ok.status === "ok" && ok.exitCode === 0);
  // A fault: the program is pid 1 of its pid namespace, which ignores the
  // signals that are not forced on it.
  const seg = await sb.run("perl", ["-e", 'unpack "p", pack "L!", 1']);
  assert.deepEqual([seg.exitCode, seg.signal, seg.status, seg.report.signalName], [139, 11, "signaled", "SIGSEGV"]);
});

test("input and binary output", { skip: SKIP }, async (t) => {
  const sb = await sandbox(t).build();
  assert.equal((await sb.run("cat", [], { input: "line one\nline two\n" })).stdout, "line one\nline two\n");
  const data = Buffer.alloc(256 * 1024);
  for (let i = 0; i < data.length; i++) data[i] = i % 256;
  const r = await sb.run("cat", [], { input: data });
  assert.ok(r.stdoutBytes.equals(data));
  assert.equal((await sb.run("cat")).stdout, "");
  // More input than a pipe holds, with the program writing at once.
  const big = Buffer.alloc(4 * MB, "x");
  const b = await sb.run("sh", ["-c", "cat; echo done >&2"], { input: big });
  assert.equal(b.stdoutBytes.length, big.length);
  assert.equal(b.stderr, "done\n");
});

test("timeout is a wall-time limit", { skip: SKIP }, async (t) => {
  const root = stateRoot(t);
  const sb = await Sandbox.builder().stateRoot(root).build();
  const r = await sb.run("sleep", ["30"], { timeout: 0.3 });
  assert.equal(r.status, "wall-timeout");
  assert.equal(r.exitCode, 137);
  assert.ok(r.report.killed && r.report.limits.wallTime.hit);
  assert.equal(r.report.limits.wallTime.requested, 0.3);
  const tight = await Sandbox.builder().stateRoot(root).wallTimeLimit(0.2).build();
  assert.equal((await tight.run("sleep", ["30"], { timeout: 60 })).report.limits.wallTime.requested, 0.2);
});

test("what the program sees", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  const ro = join(tmp, "ro");
  const rw = join(tmp, "rw");
  mkdirSync(ro);
  mkdirSync(rw);
  writeFileSync(join(ro, "file"), "read me\n");
  const sb = await sandbox(t)
    .mount(ro, "/ro", Permission.ReadOnly)
    .mount(rw, "/rw", Permission.ReadWrite)
    .tmpfs("/scratch", { size: MB })
    .workingDir("/scratch")
    .env("GREETING", "hi there")
    .hostname("jsbox")
    .user(1234, 4321)
    .build();
  const r = await sb.run("sh", ["-c",
    'cat /ro/file; touch /ro/x 2>/dev/null || echo ro-refused; echo w >/rw/out; pwd; echo "$GREETING"; hostname; id -u; id -g; ' +
    'df -k /scratch | tail -1 | awk "{print \\$2}"; test -s /etc/shadow && echo SHADOW-VISIBLE; true']);
  assert.ok(r.success, r.stderr);
  assert.deepEqual(r.stdout.split("\n").slice(0, 8), ["read me", "ro-refused", "/scratch", "hi there", "jsbox", "1234", "4321", "1024"]);
  assert.ok(!r.stdout.includes("SHADOW-VISIBLE"));
  assert.equal(readFileSync(join(rw, "out"), "utf8"), "w\n");
  assert.equal(statSync(join(rw, "out")).uid, process.geteuid());
});

test("the report has the JSON's fields, typed", { skip: SKIP }, async (t) => {
  const sb = await sandbox(t).wallTimeLimit(30).openFilesLimit(64).outputLimit(MB).build();
  const r = await sb.run("echo", ["hi"]);
  const rep = r.report;
  assertKeys(rep, ["version", "id", "status", "exitCode", "signal", "signalName", "killed", "error", "errorKind", "problems",
    "wallTime", "cpuUser", "cpuSystem", "cpuSource", "peakMemory", "peakMemorySource", "oomKilled", "voluntaryContextSwitches",
    "involuntaryContextSwitches", "outputBytes", "outputTruncated", "network", "limits", "isolation"], "report");
  assertKeys(rep.isolation, ["rootless", "namespaces", "network", "seccomp", "landlock", "cgroup", "degraded"], "isolation");
  for (const [name, l] of Object.entries(rep.limits)) {
    assertKeys(l, ["requested", "unit", "status", "mechanism", "reason", "hit"], `limits.${name}`);
  }
  assert.equal(rep.version, 1);
  assert.match(rep.id, /^sb-/);
  assert.ok(rep.wallTime > 0 && rep.peakMemory > 0 && rep.peakMemorySource);
  assert.equal(rep.outputBytes, 3);
  assert.equal(rep.limits.openFiles.mechanism, "RLIMIT_NOFILE");
  assert.equal(rep.isolation.rootless, process.geteuid() !== 0);
});
