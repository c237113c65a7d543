// `npm start`: build when needed, then `emberscope serve --init` for the directory npm was run in.
// Extra arguments pass through: `npm start -- --port 3001`.
import path from "node:path";
import { root } from "./build-state.js";
import { ensureBuild } from "./ensure-build.js";
import { run } from "./run.js";

process.env.NEXT_TELEMETRY_DISABLED = "1";
const built = await ensureBuild();
if (built !== 0) process.exit(built);
const projectRoot = process.env.INIT_CWD ?? process.cwd();
process.exitCode = await run(
  process.execPath,
  [path.join(root, "bin", "emberscope.js"), "serve", "--init", "--project-root", projectRoot, ...process.argv.slice(2)],
  { cwd: projectRoot },
);
