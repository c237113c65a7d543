// Builds the app when .next/ is missing or older than its sources (used by npm test and npm start).
import { needsBuild, root } from "./build-state.js";
import { npmCommand, run } from "./run.js";

export async function ensureBuild() {
  if (!needsBuild()) return 0;
  console.error("emberscope: building the workbench (next build)…");
  return run(npmCommand, ["run", "build", "--silent"], { cwd: root, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await ensureBuild();
}
