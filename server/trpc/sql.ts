import { runSql } from "../services/sql";
import { procedureFor, router } from "./init";

export const sqlRouter = router({
  query: procedureFor(runSql),
});
