// Run one program in a sandbox from Node.js: hello from python3 when the
// host has it, from echo otherwise, and what the report says.
//
//     node examples/js/demo.mjs
//
// (An application installs the package, `npm install ./js`, and imports
// "nanobox"; the examples import it from the repository.)
import { MB, ProgramNotFoundError, Sandbox } from "../../js/src/index.js";

const sandbox = await Sandbox.builder().wallTimeLimit(30).outputLimit(MB).build();
let result;
try {
  result = await sandbox.run("/usr/bin/python3", ["-c", "print('hello from python in a sandbox')"]);
} catch (e) {
  if (!(e instanceof ProgramNotFoundError)) throw e;
  result = await sandbox.run("/bin/echo", ["hello from echo in a sandbox (no python3 here)"]);
}
process.stdout.write(result.stdout);
const r = result.report;
console.log(
  `status ${r.status}, exit ${r.exitCode}, wall ${(r.wallTime * 1e3).toFixed(3)}ms, ` +
    `cpu ${((r.cpuUser + r.cpuSystem) * 1e3).toFixed(3)}ms, peak memory ${Math.floor(r.peakMemory / 1024)} KiB (${r.peakMemorySource})`,
);
for (const [name, lim] of Object.entries(r.limits)) console.log(`limit ${name}: ${lim.status} by ${lim.mechanism}`);
