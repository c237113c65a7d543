import type { ServiceContext } from "../services/service";

/** The project the web server was started for (set by `emberscope serve`), else its working directory. */
export function webServiceContext(): ServiceContext {
  const projectRoot = process.env.EMBERSCOPE_PROJECT_ROOT ?? process.cwd();
  return { locator: { cwd: projectRoot, projectRoot }, actor: "web" };
}
