import type { ErrorDocument } from "../server/domain/errors";
import { RecoveryButton } from "./RecoveryButton";

/**
 * A typed error as a person sees it: code, message, and the next step — the recovery operation
 * as a button (when the web app offers it) and as a CLI command to copy.
 */
export function ErrorPanel(props: {
  error: ErrorDocument;
  command?: string;
  recoveryKind?: "query" | "mutation";
  recoveryLabel?: string;
}) {
  const { error } = props;
  return (
    <div className="error-panel" role="alert" data-testid="error-panel">
      <div className="code">{error.code}</div>
      <p>{error.message}</p>
      {error.recovery && props.recoveryKind ? (
        <RecoveryButton
          operation={error.recovery.operation}
          arguments={error.recovery.arguments}
          kind={props.recoveryKind}
          label={props.recoveryLabel ?? `Run ${error.recovery.operation}`}
        />
      ) : null}
      {props.command ? (
        <p>
          From a shell: <span className="command mono">{props.command}</span>
        </p>
      ) : null}
    </div>
  );
}
