"use client";

import { useState } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import type { cancelOperation } from "../../server/services/operations";
import { callMutation, errorDocumentOf } from "./trpc-client";

/**
 * Cancels an operation (operations.cancel): recorded at once; the worker holding it kills the
 * workload's process tree and the run ends as cancelled.
 */
export function CancelOperation(props: { operationId: string; requested?: boolean; onCancelled?: () => void }) {
  const [state, setState] = useState<{ busy: boolean; done: boolean; error: ErrorDocument | null }>({ busy: false, done: props.requested ?? false, error: null });
  const cancel = async () => {
    setState({ busy: true, done: false, error: null });
    try {
      await callMutation<typeof cancelOperation>("operations.cancel", { operation_id: props.operationId });
      setState({ busy: false, done: true, error: null });
      props.onCancelled?.();
    } catch (error) {
      setState({ busy: false, done: false, error: errorDocumentOf(error) });
    }
  };
  return (
    <span className="cancel-operation">
      <button type="button" className="plain-button" onClick={() => void cancel()} disabled={state.busy || state.done} data-testid="cancel-operation">
        {state.done ? "Cancelling…" : state.busy ? "Cancelling…" : "Cancel"}
      </button>
      {state.error ? <span className="error-inline"> {state.error.code}: {state.error.message}</span> : null}
    </span>
  );
}
