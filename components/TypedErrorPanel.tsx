import { toEmberscopeError, type ErrorCode } from "../server/domain/errors";
import { SERVICES } from "../server/services";
import { ErrorPanel } from "./ErrorPanel";

/** The shell spelling of the recoveries a page most often offers. */
const CLI_HINT: Partial<Record<ErrorCode, string>> = {
  WORKSPACE_NOT_FOUND: "npx emberscope init",
  RUN_NOT_FOUND: "npx emberscope runs list",
  COMMIT_NOT_FOUND: "npx emberscope commits list",
};

/**
 * Server component: whatever a page's services threw, as a typed error panel whose recovery
 * operation becomes a button (named by the service's own summary) and a command to copy.
 */
export function TypedErrorPanel({ thrown }: { thrown: unknown }) {
  const error = toEmberscopeError(thrown).toDocument();
  const recovery = SERVICES.find((s) => s.name === error.recovery?.operation);
  return (
    <ErrorPanel
      error={error}
      command={CLI_HINT[error.code]}
      recoveryKind={recovery?.kind}
      recoveryLabel={recovery?.summary.split(/[.(]/)[0].trim()}
    />
  );
}
