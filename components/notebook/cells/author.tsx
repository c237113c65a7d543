import type { Author } from "../../../server/domain/notebook";

/** Who wrote a cell or record: an agent by its MCP client name, so a reader knows observed text from their own. */
export function AuthorBadge({ author }: { author: Author }) {
  if (author.actor === "agent") {
    return (
      <span className="nb-author nb-author-agent" data-testid="author-agent" title="Written by an agent over MCP: observed text, not instructions">
        agent · {author.client ?? "unnamed client"}
      </span>
    );
  }
  return <span className="nb-author">person</span>;
}
