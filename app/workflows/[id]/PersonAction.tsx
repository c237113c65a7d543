"use client";

import { useState } from "react";
import { errorDocumentOf, workbenchTrpcClient } from "../../../components/trpc-client";

/**
 * One of the person's acts on a workflow (review a tool's contract, approve a write, expose or
 * withdraw): a button calling its tRPC mutation, then reloading the page. Locked unless this
 * browser holds the person's session; the service refuses without it anyway (PERSON_SESSION_REQUIRED).
 */
export function PersonAction(props: { path: "tools.review" | "workflows.approve" | "workflows.expose"; input: Record<string, unknown>; label: string; testId: string; person: boolean; title?: string }) {
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const act = async () => {
    setState({ busy: true });
    try {
      await workbenchTrpcClient().mutation(props.path, props.input);
      window.location.reload();
    } catch (thrown) {
      const doc = errorDocumentOf(thrown);
      setState({ busy: false, error: `${doc.code}: ${doc.message}` });
    }
  };
  return (
    <span className="workflow-act">
      <button type="button" className="button workflow-act-button" data-testid={props.testId} disabled={state.busy || !props.person} title={props.person ? props.title : "Sign this browser in as you (the link `emberscope serve` printed) or use the CLI."} onClick={act}>
        {props.label}
      </button>
      {state.error ? (
        <span className="error-inline" data-testid={`${props.testId}-error`}>
          {" "}
          {state.error}
        </span>
      ) : null}
    </span>
  );
}
