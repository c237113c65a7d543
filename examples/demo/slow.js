// A workload that never finishes on its own and starts a child of its own: used to check that
// cancel and timeout kill the whole process group.
const { spawn } = require("node:child_process");
const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
console.log(`slow: started child ${child.pid}`);
setInterval(() => {
  let x = 0;
  for (let i = 0; i < 1e6; i++) x += i;
}, 10);
