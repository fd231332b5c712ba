// Errors are exceptions carrying the runtime's one-line message and its
// machine-readable problems, never a bare exit code.

import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, SKIP, stateRoot, tempDir } from "./helpers.js";
import {
  BinaryNotFoundError, ContractError, InvalidOptionsError, Permission, ProgramNotExecutableError,
  ProgramNotFoundError, Sandbox, SandboxSetupError,
} from "../src/index.js";

test("binary not found", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  const saved = { NANOBOX_RUNC: process.env.NANOBOX_RUNC, PATH: process.env.PATH };
  t.after(() => Object.assign(process.env, saved));
  delete process.env.NANOBOX_RUNC;
  process.env.PATH = tmp;
  await assert.rejects(Sandbox.builder().build(), (e) => e instanceof BinaryNotFoundError && /not found on PATH.*NANOBOX_RUNC/.test(e.message));
  process.env.NANOBOX_RUNC = join(tmp, "nope");
  await assert.rejects(Sandbox.builder().build(), (e) => e instanceof BinaryNotFoundError && /NANOBOX_RUNC: .*nope.* is not an executable file/.test(e.message));
  delete process.env.NANOBOX_RUNC;
  symlinkSync(BINARY, join(tmp, "nanobox-runc"));
  assert.equal((await Sandbox.builder().build()).binary, join(tmp, "nanobox-runc"));
});

test("invalid options", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  await assert.rejects(Sandbox.builder().stateRoot(stateRoot(t)).mount(join(tmp, "missing"), "/data", Permission.ReadOnly).build(), (e) => {
    assert.ok(e instanceof InvalidOptionsError);
    assert.equal(e.field, "mounts[0].source");
    assert.equal(e.kind, "invalid-options");
    assert.match(e.message, /create it or fix the path/);
    return true;
  });
  await assert.rejects(Sandbox.builder().workingDir("relative").memoryLimit(-1).build(), (e) => {
    assert.deepEqual(e.fields, ["workDir", "limits.memory"]);
    assert.match(e.message, /^sandbox options: workDir: /);
    return true;
  });
  await assert.rejects(Sandbox.fromOptions({ version: 1, limitz: {} }), (e) => e instanceof InvalidOptionsError && /unknown field "limitz"/.test(e.message));
  await assert.rejects(Sandbox.fromOptions({ version: 2 }), (e) => e instanceof InvalidOptionsError && /contract version 2 is not supported/.test(e.message));
});

test("program errors", { skip: SKIP }, async (t) => {
  const sb = await Sandbox.builder().stateRoot(stateRoot(t)).build();
  await assert.rejects(sb.run("no-such-program"), (e) => {
    assert.ok(e instanceof ProgramNotFoundError);
    assert.match(e.message, /no-such-program/);
    assert.equal(e.report.exitCode, 127);
    assert.equal(e.report.status, "setup-error");
    assert.match(e.fix, /absolute path/);
    return true;
  });
  await assert.rejects(sb.run("/etc/passwd"), (e) => e instanceof ProgramNotExecutableError && e instanceof SandboxSetupError && e.report.exitCode === 126);
});

test("a runtime that writes no report", async (t) => {
  const tmp = tempDir(t);
  const fake = join(tmp, "nanobox-runc");
  writeFileSync(fake, '#!/bin/sh\nfor a; do [ "$a" = --validate ] && exit 0; done\necho "it broke" >&2\nexit 3\n');
  chmodSync(fake, 0o755);
  const sb = await Sandbox.builder().binary(fake).build();
  await assert.rejects(sb.run("true"), (e) => e instanceof ContractError && /exited with status 3 and wrote no report: it broke/.test(e.message));
});
