// Shared by the tests: they run real sandboxes with the nanobox-runc at
// $NANOBOX_RUNC (js/run-tests.sh sets it to the repository's build), as
// whichever user runs them (root, or an ordinary user: run-tests.sh runs
// both).

import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

function binary() {
  const b = process.env.NANOBOX_RUNC || join(REPO, "nanobox-runc");
  try {
    accessSync(b, constants.X_OK);
  } catch {
    return "";
  }
  process.env.NANOBOX_RUNC = b;
  return b;
}

export const BINARY = binary();
/** The tests' skip option: set when there is no runtime to test. */
export const SKIP = BINARY ? false : "no nanobox-runc: build it (make build) or set NANOBOX_RUNC";
export const PATH = "/usr/local/bin:/usr/bin:/bin";
export const ROOTLESS = process.geteuid() !== 0;

let checked = null;

/** `nanobox-runc sandbox --check` for this user, as JSON. */
export function hostCheck() {
  if (!checked) {
    const p = spawnSync(BINARY, ["sandbox", "--check", "--report-format", "json"], { encoding: "utf8" });
    checked = JSON.parse(p.stdout);
  }
  return checked;
}

/** A cgroup enforces this limit for this caller; otherwise it is refused unless degraded. */
export function cgroupEnforces(limit) {
  return String(hostCheck().limits[limit] ?? "").startsWith("enforced by cgroup");
}

/** A private directory for a test, removed afterwards. */
export function tempDir(t, prefix = "nanobox-js-") {
  const d = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/**
 * What a state root holds besides the compiled seccomp filters the runtime
 * keeps there on purpose (.seccomp-HASH): what a sandbox that leaves
 * nothing behind must leave empty.
 */
export function stateLeft(root) {
  return readdirSync(root).filter((n) => !/^\.seccomp-[0-9a-f]{64}$/.test(n));
}

/**
 * A state root of the test's own; the test fails if a sandbox's state
 * directory is left in it.
 */
export function stateRoot(t) {
  const d = mkdtempSync(join(tmpdir(), "nanobox-js-state-"));
  t.after(() => {
    const left = stateLeft(d);
    rmSync(d, { recursive: true, force: true });
    assert.deepEqual(left, [], `sandbox state left behind: ${left}`);
  });
  return d;
}

/** pgrep -f PATTERN finds a process. */
export function running(pattern) {
  return spawnSync("pgrep", ["-f", pattern]).status === 0;
}

/** Poll cond until it holds, with a generous deadline. */
export async function eventually(cond, what, seconds = 60) {
  const end = Date.now() + seconds * 1000;
  while (!(await cond())) {
    assert.ok(Date.now() < end, `never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every key of the JSON object raw is one of keys (the fields index.d.ts gives Report; test/types.ts is checked by tsc). */
export function assertKeys(obj, keys, where) {
  for (const k of Object.keys(obj)) {
    assert.ok(keys.includes(k), `${where}: the report's ${JSON.stringify(k)} is not in the package's types`);
  }
}
