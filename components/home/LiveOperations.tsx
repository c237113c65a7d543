"use client";

import { useEffect, useState } from "react";
import type { listOperations } from "../../server/services/operations";
import type { Operation } from "../../server/store/operations";
import { CancelOperation } from "./CancelOperation";
import { CaptureClock } from "./CaptureClock";
import { OperationProgress } from "./OperationProgress";
import { callQuery } from "./trpc-client";

/** Operations still running (captures, long imports), polled every second and a half. */
export function LiveOperations(props: { initial: Operation[] }) {
  const [ops, setOps] = useState(props.initial);
  useEffect(() => {
    let stopped = false;
    const tick = async () => {
      try {
        const page = await callQuery<typeof listOperations>("operations.list", { active: true, limit: 20 });
        if (!stopped) setOps(page.items);
      } catch {
        // keep the last answer; the next tick retries
      }
      if (!stopped) setTimeout(tick, 1500);
    };
    const timer = setTimeout(tick, 1500);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  if (ops.length === 0) return <p className="muted" data-testid="operations-idle">No operations running.</p>;
  return (
    <table className="data" data-testid="operations-table" data-count={ops.length}>
      <thead>
        <tr>
          <th>Operation</th>
          <th>Progress</th>
          <th>Started (UTC)</th>
        </tr>
      </thead>
      <tbody>
        {ops.map((op) => (
          <tr key={op.operation_id}>
            <td>
              {op.kind}
              <div className="mono muted live-op-id">{op.operation_id}</div>
              {op.run_id ? (
                <div className="mono live-op-id">
                  run <a href={`/runs/${op.run_id}`}>{op.run_id}</a>
                </div>
              ) : null}
            </td>
            <td>
              <div className="live-op-progress">
                <OperationProgress op={op} /> <CaptureClock since={op.created_at} />
                {op.state === "running" || op.state === "queued" || op.state === "cancelling" ? <CancelOperation operationId={op.operation_id} requested={op.cancel_requested} /> : null}
              </div>
            </td>
            <td className="num" title={`${op.created_at.replace("T", " ").slice(0, 19)} UTC`}>
              {op.created_at.slice(11, 19)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
