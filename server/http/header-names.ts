// Names the server and the browser code agree on. No imports: the workbench's client code reads this file too.

/** The header the workbench's pages send their CSRF token in (a cross-site page can neither read the token nor set the header). */
export const CSRF_HEADER = "x-emberscope-csrf";

/** Where a page gets the CSRF token: GET, same-origin only (no CORS), never cached. */
export const SESSION_PATH = "/api/session";

/** The sign-in link's path: `/sign-in?code=…` trades a one-time code for the person's cookie. */
export const SIGN_IN_PATH = "/sign-in";

/** The person's session cookie is this prefix followed by the served port. */
export const PERSON_COOKIE_PREFIX = "emberscope_person_";
