// The seed example of the issue, in TypeScript idiom, and its fail-closed
// form where this caller cannot have a memory cgroup.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cgroupEnforces, SKIP } from "./helpers.js";
import { Sandbox, MB, LimitUnavailableError } from "../src/index.js";

test("the seed example", { skip: SKIP }, async () => {
  const seed = async () => {
    const sandbox = await Sandbox.builder()
      .workingDir("/tmp")
      .memoryLimit(128 * MB)
      .build();
    const result = await sandbox.run("echo", ["hello"]);
    return result.stdout;
  };
  if (cgroupEnforces("memory")) {
    assert.equal(await seed(), "hello\n");
    return;
  }
  // No cgroup for this caller: the memory limit fails closed, naming the
  // limit and the fix...
  await assert.rejects(seed, (e) => {
    assert.ok(e instanceof LimitUnavailableError);
    assert.equal(e.limit, "memory");
    assert.match(e.message, /limits\.memory/);
    assert.match(e.fix, /allowDegraded: \["memory"\]/);
    return true;
  });
  // ...and runs when its degradation is allowed, the report saying how.
  const sb = await Sandbox.builder().workingDir("/tmp").memoryLimit(128 * MB).allowDegraded("memory").build();
  const r = await sb.run("echo", ["hello"]);
  assert.equal(r.stdout, "hello\n");
  assert.equal(r.report.limits.memory.status, "degraded");
  assert.match(r.report.limits.memory.mechanism, /^RLIMIT_AS/);
});
