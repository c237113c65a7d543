// Runs in the browser before React hydrates. Pages that query DuckDB-WASM (the SQL page and a run's
// SQL view) start its worker and wasm here, while the page's own scripts still load and hydrate.
// engine.ts is small (the engine itself is a dynamic import), so other pages pay next to nothing.
import { preloadEngine } from "./components/sql/engine";

try {
  if (window.location.pathname === "/sql" || new URLSearchParams(window.location.search).get("view") === "sql") preloadEngine();
} catch {
  // An early start is an optimization only: the SQL console starts the engine when it mounts.
}
