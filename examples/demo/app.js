// Emberscope's demo workload: CPU work with known hot functions, used by the first-run page,
// the README walkthrough and the capture tests.
//   node app.js --seconds 1.5 --mode primes   → most time in countPrimes
//   node app.js --seconds 1.5 --mode hash     → most time in hashStrings
//   node app.js --rounds 50 --mode primes     → a fixed amount of work (for benchmarks)
//   node app.js --mode batch                 → a fixed amount of work: 300 rounds of countPrimes
//   node app.js --mode batch-heavy           → the same with ~30 % more work (390 rounds), for experiments
// Both modes also spend a little time in formatReport (cold).

function countPrimes(limit) {
  let count = 0;
  for (let n = 2; n < limit; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) {
      if (n % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime) count++;
  }
  return count;
}

function hashStrings(rounds) {
  let h = 2166136261;
  for (let i = 0; i < rounds; i++) {
    const text = `item-${i}-${h}`;
    for (let j = 0; j < text.length; j++) h = Math.imul(h ^ text.charCodeAt(j), 16777619) >>> 0;
  }
  return h;
}

function formatReport(results) {
  return results.map((r, i) => `${i}:${r}`).join(",").length;
}

/** Fixed-work modes: their run time does not depend on --seconds, so variants' costs compare. */
const BATCH_ROUNDS = { batch: 300, "batch-heavy": 390 };

function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? args[at + 1] : fallback;
  };
  const seconds = Number(option("seconds", "1.5"));
  const rounds = Number(option("rounds", String(BATCH_ROUNDS[option("mode", "")] ?? 0)));
  const mode = option("mode", "primes");
  const end = Date.now() + seconds * 1000;
  const results = [];
  while (rounds > 0 ? results.length < rounds : Date.now() < end) {
    results.push(mode === "hash" ? hashStrings(20000) : countPrimes(30000));
    if (results.length % 10 === 0) formatReport(results);
  }
  console.log(`${mode}: ${results.length} rounds, report ${formatReport(results)} chars`);
}

main();
