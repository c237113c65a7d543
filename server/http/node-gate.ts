import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { BOUNDARY_HEADERS, refusalBody, refusalOf, routePolicy, type HeaderReader, type Refusal, type RouteKind } from "./guard";

/**
 * The boundary on a Node HTTP server (`emberscope serve`): every request passes `refusalOf`
 * before Next or the MCP endpoint sees it, so a page, a route added later and /api/mcp are held
 * to the same rules, and an oversized body is refused before a byte of it is read.
 */

/** A Node request's headers read as a Web `Headers` reads them: any case, repeated ones joined by ", ". */
export function headerReader(rawHeaders: string[]): HeaderReader {
  const values = new Map<string, string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    const seen = values.get(name);
    values.set(name, seen === undefined ? rawHeaders[i + 1] : `${seen}, ${rawHeaders[i + 1]}`);
  }
  return { get: (name) => values.get(name.toLowerCase()) ?? null };
}

export function pathOf(url: string | undefined): string {
  const target = url ?? "/";
  const query = target.indexOf("?");
  return query < 0 ? target : target.slice(0, query);
}

/** How long, and how many more bytes, a closing connection keeps reading (and dropping) what its client still sends. */
export const LINGER_MS = 2000;
export const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * Makes Node's close after a `Connection: close` answer a lingering close: the answer, then a FIN,
 * then whatever the client still sends is read and dropped (up to LINGER_BYTES), then no more is
 * read, until LINGER_MS have passed and the socket is destroyed. Destroyed at once with unread
 * bytes pending, the kernel would send a reset, and a client still uploading would lose the
 * answer (413) before reading it: its write fails first. Past LINGER_BYTES the client's writes
 * stall on a full window instead, and it has the rest of LINGER_MS to read the answer.
 */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.destroyed) return;
    this.end();
    let dropped = 0;
    const drop = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER_BYTES) {
        this.off("data", drop);
        this.pause();
      }
    };
    this.on("data", drop);
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once("close", () => clearTimeout(timer));
  };
}

/**
 * Writes a JSON answer to a request whose body will not be read. `Connection: close` makes Node
 * close the connection once it is sent (lingering, see `lingerOnClose`), so a client still
 * uploading is cut off instead of the server reading the rest to keep the connection.
 */
export function writeUnreadBodyAnswer(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(payload));
  res.writeHead(status, { ...BOUNDARY_HEADERS, "content-type": "application/json", "cache-control": "no-store", ...headers, "content-length": String(body.length), connection: "close" });
  res.end(body);
}

export function writeRefusal(res: ServerResponse, refusal: Refusal, kind: RouteKind): void {
  writeUnreadBodyAnswer(res, refusal.status, refusalBody(refusal, kind));
}

/** Runs the boundary on a Node request; answers it and returns false when it is refused. */
export function admitNodeRequest(req: IncomingMessage, res: ServerResponse): boolean {
  const path = pathOf(req.url);
  for (const [name, value] of Object.entries(BOUNDARY_HEADERS)) res.setHeader(name, value);
  const refusal = refusalOf({ method: req.method ?? "GET", path, headers: headerReader(req.rawHeaders), servedPort: null });
  if (!refusal) return true;
  writeRefusal(res, refusal, routePolicy(path).kind);
  return false;
}
