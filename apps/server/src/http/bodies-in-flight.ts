import { fail, type InvokeResult, ok } from "@aptix/contracts";
import { rateLimited } from "./rate-limited.js";

const MIB = 1024 * 1024;

/** A body over this many bytes is a large one: a principal may have 4 of them read at once. */
const LARGE_BODY_BYTES = MIB;
/** Large bodies one principal may have read at once on an instance. */
const MAX_LARGE_BODIES_PER_PRINCIPAL = 4;
/** Bytes of bodies an instance reads at once, all principals together. */
const MAX_BODY_BYTES_IN_FLIGHT = 256 * MIB;
/** When a refused body may be sent again: a body of megabytes takes seconds to arrive. */
const RETRY_AFTER_MS = 5_000;

/**
 * The request bodies an instance is reading, so that their bytes are bounded before a byte is read: the rate
 * limit counts requests started, and one key could otherwise have hundreds of 32 MiB bodies buffering at once.
 * A body is reserved by the size it declares (Content-Length), or by the most it may be (the route's limit) when
 * it declares none. Past 4 large bodies of one principal, 429 RATE_LIMITED; past 256 MiB in all, 503 NOT_READY
 * (the instance is full, not the caller over a limit of its own). A body is let in whatever its size when
 * nothing else is being read, so a limit raised past 256 MiB still serves its largest body.
 */
export class BodiesInFlight {
  #bytes = 0;
  readonly #largeByPrincipal = new Map<string, number>();

  /** Reserves `bytes` for `principal`'s body: the release to call once it is read, or the refusal. */
  reserve(principal: string, bytes: number): InvokeResult<() => void> {
    const large = bytes > LARGE_BODY_BYTES;
    const principalLarge = this.#largeByPrincipal.get(principal) ?? 0;
    if (large && principalLarge >= MAX_LARGE_BODIES_PER_PRINCIPAL) {
      return rateLimited(
        `Too many large bodies: this principal may have ${MAX_LARGE_BODIES_PER_PRINCIPAL} bodies over 1 MiB read at once`,
        RETRY_AFTER_MS,
      );
    }
    if (this.#bytes > 0 && this.#bytes + bytes > MAX_BODY_BYTES_IN_FLIGHT) {
      return fail(
        "NOT_READY",
        "The service is reading as many request bodies as it holds at once (256 MiB); send the request again later.",
        { retryable: true, retryAfterSeconds: RETRY_AFTER_MS / 1000 },
      );
    }
    this.#bytes += bytes;
    if (large) this.#largeByPrincipal.set(principal, principalLarge + 1);
    let released = false;
    return ok(() => {
      if (released) return;
      released = true;
      this.#bytes -= bytes;
      if (!large) return;
      const left = (this.#largeByPrincipal.get(principal) ?? 1) - 1;
      if (left === 0) this.#largeByPrincipal.delete(principal);
      else this.#largeByPrincipal.set(principal, left);
    });
  }
}
