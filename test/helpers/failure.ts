import { EmberscopeError } from "../../server/domain/errors";

/** The typed error a call fails with (a call that succeeds, or fails untyped, fails the test). */
export async function failure(promise: Promise<unknown>): Promise<EmberscopeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EmberscopeError) return error;
    throw error;
  }
  throw new Error("expected a typed error");
}
