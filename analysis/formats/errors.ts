/**
 * Failures an importer reports. The import service maps them to the typed errors
 * ARTIFACT_PARSE_FAILED and ARTIFACT_TOO_LARGE; nothing is published when one is thrown.
 * A reason names the kind of problem ("a cost is not a whole number") and never quotes the input,
 * not even a byte or a number read from it: the error reaches callers who may not read the file
 * (an agent), and `at` says where to look. Limitations follow the same rule.
 */
export class EvidenceParseError extends Error {
  constructor(
    readonly format: string,
    readonly reason: string,
    /** Where the problem is: a byte offset into the (decompressed) input, and/or a 1-based line, and/or the input's field. */
    readonly at: { offset?: number; line?: number; field?: string } = {},
  ) {
    super(`${format}: ${reason}${at.line !== undefined ? ` (line ${at.line})` : ""}${at.offset !== undefined ? ` (byte ${at.offset})` : ""}`);
    this.name = "EvidenceParseError";
  }
}

export class InputBoundError extends Error {
  constructor(
    readonly bound: "size" | "expansion_ratio" | "depth" | "field_length" | "line_length",
    readonly limit: number,
    message: string,
  ) {
    super(message);
    this.name = "InputBoundError";
  }
}

/**
 * An input that was read without error but yielded nothing to look at: no samples, spans or
 * measurements. The import service maps it to ARTIFACT_EMPTY; nothing is published. `skipped`:
 * the limitations the importer recorded, which say what it passed over.
 */
export class EmptyEvidenceError extends Error {
  constructor(
    readonly format: string,
    readonly skipped: { code: string; message: string; count: number }[],
  ) {
    super(`${format}: the input holds no samples, spans or measurements`);
    this.name = "EmptyEvidenceError";
  }
}

/**
 * A file of a known format in a version its importer cannot read (too old to upgrade, or newer
 * than any it knows): refused by version, never guessed at. Mapped to UNSUPPORTED_FORMAT_VERSION.
 */
export class UnsupportedVersionError extends EvidenceParseError {
  constructor(
    format: string,
    /** The version the file declares, as the file writes it. */
    readonly version: string,
    /** The versions the importer reads, in words ("5 to 31"). */
    readonly supported: string,
    reason: string,
    at: { offset?: number; line?: number } = {},
  ) {
    super(format, reason, at);
    this.name = "UnsupportedVersionError";
  }
}
