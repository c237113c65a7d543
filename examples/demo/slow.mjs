// A workload that never finishes on its own and starts a child of its own: used to check that
// cancel and timeout kill the whole process group. (.mjs: an ES module wherever the demo is copied.)
import { spawn } from "node:child_process";

const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
console.log(`slow: started child ${child.pid}`);
let spin = 0;
setInterval(() => {
  for (let i = 0; i < 1e6; i++) spin = (spin + i) % 1000003;
}, 10);
