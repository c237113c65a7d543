import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { CSRF_HEADER, PERSON_COOKIE_PREFIX } from "./header-names";

/**
 * The secrets of one server launch, made fresh by every `emberscope serve` (and, lazily, by any
 * other host of the app): the CSRF token the workbench's pages send with every state-changing
 * request, the person's session cookie, and the one-time sign-in codes that hand the cookie to a
 * browser. None of it is stored: a restart ends every session.
 *
 * The session lives on `globalThis` under a registered symbol because `emberscope serve` and
 * the Next app it runs are separate bundles (separate module instances) in one process.
 */

export interface LaunchSession {
  /** Identifies this launch in the control store's server registry. */
  readonly launchId: string;
  /** The port this server answers on, once known (the Host header must name it). */
  servedPort: number | null;
  /** Host names beside loopback that address this server (non-loopback --host with --allow-remote). */
  extraHosts: string[];
  /** Sent by the workbench's pages in the CSRF header of every state-changing request. */
  readonly csrfToken: string;
  /** The value of the person's session cookie. */
  readonly personToken: string;
  /** Hashes of unused sign-in codes made in this process (the one `serve` announces). */
  readonly codes: Set<string>;
}

const KEY = Symbol.for("emberscope.launch-session");

function derive(secret: Buffer, purpose: string): string {
  return createHmac("sha256", secret).update(`emberscope-launch\0${purpose}`).digest("base64url");
}

/** This process's launch session, made on first use. */
export function launchSession(): LaunchSession {
  const holder = globalThis as { [KEY]?: LaunchSession };
  if (!holder[KEY]) {
    const secret = randomBytes(32);
    holder[KEY] = {
      launchId: `srv_${randomBytes(8).toString("hex")}`,
      servedPort: null,
      extraHosts: [],
      csrfToken: derive(secret, "csrf"),
      personToken: derive(secret, "person"),
      codes: new Set(),
    };
  }
  return holder[KEY];
}

export function hashCode(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

/** A fresh one-time sign-in code (32 random bytes, base64url). Only its hash is kept. */
export function newSignInCode(): { code: string; hash: string } {
  const code = randomBytes(32).toString("base64url");
  return { code, hash: hashCode(code) };
}

/** Makes a one-time sign-in code that this process accepts until it is used. */
export function mintLaunchSignInCode(session = launchSession()): string {
  const { code, hash } = newSignInCode();
  session.codes.add(hash);
  return code;
}

/** Uses up a code made by this process; false when it is unknown or already used. */
export function consumeLaunchSignInCode(code: string, session = launchSession()): boolean {
  return session.codes.delete(hashCode(code));
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The CSRF header of a request against this launch's token. */
export function csrfVerdict(headers: { get(name: string): string | null }, session = launchSession()): "ok" | "missing" | "invalid" {
  const sent = headers.get(CSRF_HEADER);
  if (!sent) return "missing";
  return sameText(sent, session.csrfToken) ? "ok" : "invalid";
}

/** The person's cookie is named per port: cookies are shared by every port of a host, so two servers would overwrite each other's. */
export function personCookieName(port: number | string): string {
  return `${PERSON_COOKIE_PREFIX}${port}`;
}

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Whether a request carries this launch's person cookie (for the port it was sent to). */
export function hasPersonCookie(headers: { get(name: string): string | null }, port: number | string, session = launchSession()): boolean {
  const value = cookieValue(headers.get("cookie"), personCookieName(port));
  return value !== null && sameText(value, session.personToken);
}

/**
 * The Set-Cookie header that makes a browser the person for this launch: HttpOnly (no script
 * reads it), SameSite=Strict (no other site's page or link sends it), no expiry (it ends with the
 * browser session, and its value with the launch).
 */
export function personCookieHeader(port: number | string, session = launchSession()): string {
  return `${personCookieName(port)}=${session.personToken}; Path=/; HttpOnly; SameSite=Strict`;
}

/** Whether a request to this server carries the person's cookie: the port is the served one, else the one the Host header names. */
export function isPersonRequest(headers: { get(name: string): string | null }, session = launchSession()): boolean {
  let port: number | string | null = session.servedPort;
  if (port === null) {
    const match = /:(\d+)$/.exec(headers.get("host") ?? "");
    port = match ? match[1] : 80;
  }
  return hasPersonCookie(headers, port, session);
}
