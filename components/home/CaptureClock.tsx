"use client";

import { useEffect, useState } from "react";

/** Seconds as people read a running capture's clock: 4.2 s, 1 min 05 s. */
export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  return `${m} min ${String(Math.floor(seconds % 60)).padStart(2, "0")} s`;
}

/** How long an operation has run (from its creation), against its timeout when it has one; ticks while shown. */
export function CaptureClock(props: { since: string; timeoutS?: number | null }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  const elapsed = Math.max(0, (now - Date.parse(props.since)) / 1000);
  const timeout = props.timeoutS ?? null;
  return (
    <span className="capture-clock num" data-testid="capture-clock" data-elapsed-s={elapsed.toFixed(1)} data-timeout-s={timeout ?? ""}>
      {formatSeconds(elapsed)}
      {timeout ? (
        <>
          {" "}
          of {formatSeconds(timeout)} timeout <progress className="timeout-bar" max={timeout} value={Math.min(elapsed, timeout)} />
        </>
      ) : (
        " elapsed"
      )}
    </span>
  );
}
