import { createHash } from "node:crypto";

/** Digests this process knows stored; past it the set starts again (a catalog already stored is not re-sent). */
const REMEMBERED = 1_024;

/** A call payload (its `request` or `provider_request`) as stored: without its tool catalog, and the digest. */
interface SplitPayload {
  payload: unknown;
  /** The catalog's digest in `tool_catalogs`; null when the payload has no catalog (it is stored whole). */
  digest: string | null;
}

/**
 * The tool catalogs of LLM calls, stored once each in `tool_catalogs` by the SHA-256 of their JSON text. Every
 * call of a mode sends the same catalog, in the neutral request and again in the provider's, and it is most of
 * the trace: kept inline, each turn made Postgres parse and compress it twice more. A payload whose `tools` is
 * a non-empty array is stored without it, and the call keeps the digest; reads put it back.
 */
export class ToolCatalogs {
  /** Digests known to be in `tool_catalogs`, so their text is not sent again. */
  readonly #stored = new Set<string>();
  /**
   * Text and digest per catalog array. A mode's catalog is one array, in every call of the mode (core and the
   * adapters keep it so), so it is serialised and hashed once, not twice per call.
   */
  readonly #digests = new WeakMap<unknown[], { text: string; digest: string }>();

  /**
   * `payload` without its catalog. A catalog not known stored is added to `unstored` (digest → JSON text), for
   * the write to insert.
   */
  split(payload: unknown, unstored: Map<string, string>): SplitPayload {
    if (!isPlainObject(payload) || !Array.isArray(payload.tools) || payload.tools.length === 0) {
      return { payload, digest: null };
    }
    const { tools, ...rest } = payload;
    const { text, digest } = this.#digestOf(tools);
    if (!this.#stored.has(digest)) unstored.set(digest, text);
    return { payload: rest, digest };
  }

  #digestOf(tools: unknown[]): { text: string; digest: string } {
    const known = this.#digests.get(tools);
    if (known) return known;
    const text = JSON.stringify(tools);
    const digested = { text, digest: createHash("sha256").update(text).digest("base64url") };
    this.#digests.set(tools, digested);
    return digested;
  }

  /** Records that `digests` are in the database now (their write committed). */
  stored(digests: Iterable<string>): void {
    for (const digest of digests) {
      if (this.#stored.size >= REMEMBERED) this.#stored.clear();
      this.#stored.add(digest);
    }
  }
}

/** A stored payload with its catalog put back (`tools` null: it was stored whole). */
export function withTools(payload: unknown, tools: unknown[] | null): unknown {
  return tools === null || !isPlainObject(payload) ? payload : { ...payload, tools };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
