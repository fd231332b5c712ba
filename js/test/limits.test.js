// Each limit tried by a program that tries to exceed it: the result's
// status and the limit's fate. Without a cgroup for this caller, memory,
// pids and cpus fail closed unless degradation is allowed.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cgroupEnforces, PATH, SKIP, stateRoot } from "./helpers.js";
import { _OutputBuffer, KB, LimitUnavailableError, MB, Sandbox } from "../src/index.js";

const b = (t) => Sandbox.builder().stateRoot(stateRoot(t)).env("PATH", PATH);

test("wall time", { skip: SKIP }, async (t) => {
  const r = await (await b(t).wallTimeLimit(0.3).build()).run("sleep", ["30"]);
  assert.equal(r.status, "wall-timeout");
  assert.ok(r.report.limits.wallTime.hit);
});

test("cpu time", { skip: SKIP }, async (t) => {
  const r = await (await b(t).cpuTimeLimit(0.5).wallTimeLimit(120).build()).run("sh", ["-c", "while :; do :; done"]);
  assert.equal(r.status, "cpu-timeout");
  assert.ok(r.report.limits.cpuTime.hit && r.report.cpuUser + r.report.cpuSystem >= 0.4);
});

test("output limit", { skip: SKIP }, async (t) => {
  const r = await (await b(t).outputLimit(64 * KB).wallTimeLimit(60).build()).run("sh", ["-c", "while :; do echo flood; done"]);
  assert.equal(r.status, "output-limit");
  assert.ok(r.outputTruncated && r.stdoutBytes.length + r.stderrBytes.length <= 64 * KB);
});

test("the output cap without a limit", () => {
  const buf = new _OutputBuffer(10);
  buf.add(1, Buffer.from("12345678"));
  buf.add(2, Buffer.from("abcdef"));
  buf.add(1, Buffer.from("zz"));
  assert.equal(buf.get(1).toString(), "12345678");
  assert.equal(buf.get(2).toString(), "ab");
  assert.ok(buf.truncated);
});

test("open files and file size", { skip: SKIP }, async (t) => {
  const r = await (await b(t).openFilesLimit(16).build()).run("perl", ["-e",
    'my @f; while (open(my $h, "<", "/dev/null")) { push @f, $h; last if @f > 64 } print scalar(@f), " $!\\n"']);
  assert.match(r.stdout, /^13 Too many open files/);
  const f = await (await b(t).fileSizeLimit(MB).build()).run("sh", ["-c", "head -c 3000000 /dev/zero >/tmp/f; echo $?; wc -c </tmp/f"]);
  assert.deepEqual(f.stdout.split(/\s+/).filter(Boolean), ["153", String(MB)]);
});

test("memory hog", { skip: SKIP }, async (t) => {
  const hog = ["if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"];
  if (cgroupEnforces("memory")) {
    const r = await (await b(t).memoryLimit(64 * MB).build()).run("dd", hog);
    assert.equal(r.status, "oom");
    assert.ok(r.report.oomKilled && r.report.limits.memory.hit);
    return;
  }
  await assert.rejects(b(t).memoryLimit(64 * MB).build(), (e) => e instanceof LimitUnavailableError && e.limit === "memory");
  const r = await (await b(t).memoryLimit(64 * MB).allowDegraded("memory").build()).run("dd", hog);
  assert.equal(r.status, "exited");
  assert.match(r.stderr, /memory/);
  assert.equal(r.report.limits.memory.status, "degraded");
});

test("fork bomb", { skip: SKIP }, async (t) => {
  // Bounded: at most 40 forks, each child sleeping until the sandbox ends.
  const bomb = 'my $n = 0; for (1..40) { my $p = fork; last unless defined $p; if (!$p) { sleep 30; exit } $n++ } print "$n\\n"';
  const builder = b(t).pidsLimit(8).wallTimeLimit(60);
  if (!cgroupEnforces("pids")) {
    await assert.rejects(builder.build(), (e) => e instanceof LimitUnavailableError && e.limits.join() === "pids");
    builder.allowDegraded("pids");
  }
  const r = await (await builder.build()).run("perl", ["-e", bomb]);
  assert.equal(r.stdout, "7\n", r.stderr);
  assert.equal(r.report.limits.pids.status, cgroupEnforces("pids") ? "enforced" : "degraded");
});
