import { isPersonRequest } from "../http/session";
import type { ServiceContext } from "../services/service";

/**
 * The service context of a request to the web app, for the project the web server was started
 * for (set by `emberscope serve`), else its working directory. With the request's headers it
 * also says whether the request carries the person's session cookie (`ServiceContext.person`).
 */
export function webServiceContext(headers?: { get(name: string): string | null }): ServiceContext {
  const projectRoot = process.env.EMBERSCOPE_PROJECT_ROOT ?? process.cwd();
  return { locator: { cwd: projectRoot, projectRoot }, actor: "web", person: headers ? isPersonRequest(headers) : false };
}
