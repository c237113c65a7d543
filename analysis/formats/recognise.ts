/**
 * What a file looks like when no importer takes it, so that UNSUPPORTED_FORMAT can say "this looks
 * like a Firefox Profiler profile" instead of only "not recognised". Signatures are data: magic
 * bytes at an offset, the top-level keys of a JSON object (read from the head without parsing the
 * whole file), or a pattern for the first lines of text. They are asked only after every importer
 * declined, so a format that gains an importer simply stops reaching its entry here.
 */

export interface Recognition {
  /** Stable, for tools: "firefox-profiler", "zip", … */
  id: string;
  /** As a sentence's object: "a Firefox Profiler profile". */
  title: string;
  /** What to do instead, when there is something to say. */
  hint: string | null;
}

interface Signature {
  id: string;
  title: string;
  hint?: string;
  /** Any of these byte strings at its offset (default 0). */
  magic?: { bytes: string | number[]; at?: number }[];
  /** Any of these sets of keys, every key of the set at the top level of a JSON object. */
  jsonKeys?: string[][];
  /** Matched against the text of the head (its first 64 KiB), BOM and leading blanks removed. */
  text?: RegExp;
}

const SIGNATURES: readonly Signature[] = [
  // Profiles and traces of other tools.
  { id: "firefox-profiler", title: "a Firefox Profiler profile", hint: "samply and simpleperf write this format too", jsonKeys: [["meta", "threads"], ["meta", "libs"], ["profile", "duration", "markers"]] },
  { id: "safari-timeline", title: "a Safari / Web Inspector timeline recording", jsonKeys: [["version", "recording"]] },
  { id: "stackprof", title: "a Ruby stackprof profile", jsonKeys: [["mode", "interval", "frames"], ["mode", "interval", "gc_samples"]] },
  { id: "v8-heap-snapshot", title: "a V8 heap snapshot", hint: "an allocation sampling profile (.heapprofile) or a CPU profile is what Emberscope reads", jsonKeys: [["snapshot", "nodes"], ["snapshot", "strings"]] },
  { id: "lighthouse", title: "a Lighthouse report", hint: "its trace (saved with --save-assets) is a Chrome trace Emberscope reads", jsonKeys: [["lighthouseVersion"]] },
  { id: "har", title: "an HTTP Archive (HAR)", text: /^\{\s*"log"\s*:\s*\{\s*"(version|creator|pages|entries)"\s*:/ },
  { id: "jfr", title: "a Java Flight Recorder recording", magic: [{ bytes: "FLR\0" }] },
  { id: "hprof", title: "a Java heap dump (HPROF)", magic: [{ bytes: "JAVA PROFILE 1.0." }] },
  { id: "perf-data", title: "a perf.data file", hint: "run `perf script` on the machine that recorded it and import its text", magic: [{ bytes: "PERFILE2" }, { bytes: "PERFFILE" }] },
  { id: "go-trace", title: "a Go execution trace", hint: "`go tool pprof` profiles (CPU, heap) are pprof, which Emberscope reads", magic: [{ bytes: "go 1." }] },
  { id: "nettrace", title: "a .NET EventPipe trace (nettrace)", magic: [{ bytes: "Nettrace" }] },
  { id: "instruments-deep-copy", title: "an Xcode Instruments call tree (deep copy)", text: /^(Weight|Running Time)\t+Self( Weight)?\t+Symbol Names?\b/ },
  { id: "v8-prof-log", title: "a V8 --prof log (isolate-*.log)", text: /^(v8-version|shared-library|code-creation|tick),/m },
  { id: "massif", title: "a Valgrind Massif profile", text: /^desc:.*\ncmd:.*\ntime_unit:/ },
  { id: "svg", title: "an SVG image (flamegraph.pl draws these)", hint: "import the folded stacks it was drawn from", text: /^(<\?xml[^>]*>\s*)?(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i },
  // Containers and compression: the profile is inside.
  { id: "zip", title: "a ZIP archive", hint: "extract the profile from it and import that", magic: [{ bytes: "PK\x03\x04" }, { bytes: "PK\x05\x06" }] },
  { id: "tar", title: "a tar archive", hint: "extract the profile from it and import that", magic: [{ bytes: "ustar", at: 257 }] },
  { id: "zstd", title: "a Zstandard-compressed file", hint: "decompress it (zstd -d) and import the result", magic: [{ bytes: [0x28, 0xb5, 0x2f, 0xfd] }] },
  { id: "bzip2", title: "a bzip2-compressed file", hint: "decompress it (bunzip2) and import the result", magic: [{ bytes: "BZh" }] },
  { id: "xz", title: "an xz-compressed file", hint: "decompress it (xz -d) and import the result", magic: [{ bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] }] },
  { id: "7z", title: "a 7-Zip archive", hint: "extract the profile from it and import that", magic: [{ bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] }] },
  // Other files people pick by mistake.
  { id: "elf", title: "an ELF executable, library or core dump", hint: "profile the program instead (a declared workload, or perf record)", magic: [{ bytes: "\x7fELF" }] },
  { id: "mach-o", title: "a Mach-O executable", hint: "profile the program instead", magic: [{ bytes: [0xcf, 0xfa, 0xed, 0xfe] }, { bytes: [0xce, 0xfa, 0xed, 0xfe] }, { bytes: [0xfe, 0xed, 0xfa, 0xcf] }, { bytes: [0xfe, 0xed, 0xfa, 0xce] }] },
  { id: "sqlite", title: "an SQLite database", magic: [{ bytes: "SQLite format 3\0" }] },
  { id: "parquet", title: "a Parquet file", magic: [{ bytes: "PAR1" }] },
  { id: "pdf", title: "a PDF document", magic: [{ bytes: "%PDF-" }] },
  { id: "png", title: "a PNG image", magic: [{ bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] }] },
  { id: "jpeg", title: "a JPEG image", magic: [{ bytes: [0xff, 0xd8, 0xff] }] },
  { id: "gif", title: "a GIF image", magic: [{ bytes: "GIF87a" }, { bytes: "GIF89a" }] },
  { id: "html", title: "an HTML page", hint: "export the profile from the tool that shows it, rather than the page", text: /^(<!--[\s\S]*?-->\s*)*(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i },
  { id: "xml", title: "an XML document", text: /^<\?xml\s/ },
];

/** Generic shapes, when no signature fits. */
const JSON_OBJECT: Recognition = { id: "json", title: "a JSON document of no profile or trace format Emberscope knows", hint: null };

function bytesOf(value: string | number[]): number[] {
  return typeof value === "string" ? Array.from(value, (c) => c.charCodeAt(0)) : value;
}

function hasMagic(head: Uint8Array, magic: { bytes: string | number[]; at?: number }): boolean {
  const bytes = bytesOf(magic.bytes);
  const at = magic.at ?? 0;
  if (head.length < at + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (head[at + i] !== bytes[i]) return false;
  return true;
}

/**
 * The keys of the top-level JSON object that `text` starts with, as far as the text goes (a head
 * may end inside a value: the keys before it are still known); null when it is no JSON object.
 */
export function topLevelJsonKeys(text: string): Set<string> | null {
  let i = 0;
  const n = text.length;
  const space = () => {
    while (i < n && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  };
  /** The string at text[i] (a quote), i after it; null when it does not end in the text. */
  const string = (): string | null => {
    let out = "";
    for (i++; i < n; i++) {
      const c = text[i];
      if (c === '"') {
        i++;
        return out;
      }
      if (c === "\\") {
        i++;
        out += text[i] ?? "";
      } else out += c;
    }
    return null;
  };
  space();
  if (text[i] !== "{") return null;
  i++;
  const keys = new Set<string>();
  for (;;) {
    space();
    if (i >= n || text[i] === "}") return keys;
    if (text[i] !== '"') return keys.size > 0 ? keys : null;
    const key = string();
    if (key === null) return keys;
    space();
    if (text[i] !== ":") return keys.size > 0 ? keys : null;
    i++;
    keys.add(key);
    // Skip the value: strings whole, brackets counted, up to the comma or brace that ends it.
    let depth = 0;
    for (; i < n; i++) {
      const c = text[i];
      if (c === '"') {
        if (string() === null) return keys;
        i--;
      } else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        if (depth === 0) return keys;
        depth--;
      } else if (c === "," && depth === 0) break;
    }
    if (i >= n) return keys;
    i++;
  }
}

/** What the head of a file no importer takes looks like, or null when nothing fits. */
export function recogniseFormat(head: Uint8Array, headText: string): Recognition | null {
  const text = headText.replace(/^\uFEFF/, "").trimStart();
  const keys = text.startsWith("{") ? topLevelJsonKeys(text) : null;
  for (const signature of SIGNATURES) {
    const matches =
      (signature.magic?.some((magic) => hasMagic(head, magic)) ?? false) ||
      (keys !== null && (signature.jsonKeys?.some((set) => set.every((key) => keys.has(key))) ?? false)) ||
      (signature.text?.test(text) ?? false);
    if (matches) return { id: signature.id, title: signature.title, hint: signature.hint ?? null };
  }
  return keys !== null && keys.size > 0 ? JSON_OBJECT : null;
}
