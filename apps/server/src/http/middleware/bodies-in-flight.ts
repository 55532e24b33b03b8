import { fail, type InvokeResult, ok } from "@aptix/contracts";
import { rateLimited } from "../rate-limited.js";

const KIB = 1024;
const MIB = 1024 * KIB;

/** Bytes of bodies an instance reads at once, all principals together. */
const MAX_BODY_BYTES_IN_FLIGHT = 256 * MIB;
/** Bytes of bodies one principal may have read at once on an instance: half of the instance's. */
const MAX_BODY_BYTES_PER_PRINCIPAL = MAX_BODY_BYTES_IN_FLIGHT / 2;
/**
 * The least a body counts for: its connection, parser and stream buffers hold about this whatever it declares, so
 * bodies declaring a few bytes and never sending them are not free to hold open by the thousand.
 */
const MIN_BODY_BYTES = 64 * KIB;
/** When a refused body may be sent again: a body of megabytes takes seconds to arrive. */
const RETRY_AFTER_MS = 5_000;

/**
 * The request bodies an instance is reading, so that their bytes are bounded before a byte is read: the rate
 * limit counts requests started, and one key could otherwise have hundreds of 32 MiB bodies buffering at once.
 * A body is reserved by the size it declares (Content-Length, at least 64 KiB), or by the most it may be (the
 * route's limit) when it declares none (sent chunked); a request without a body reserves nothing. Every body
 * counts, whatever its size: past 128 MiB of one principal's bodies, 429 RATE_LIMITED; past 256 MiB in all, 503
 * NOT_READY (the instance is full, not the caller over a limit of its own). So one principal's bodies, large or
 * small, fill at most half of the instance. A body is let in whatever its size when nothing else of its principal
 * (for the first bound) or of anyone (for the second) is being read, so a limit raised past them still serves its
 * largest body.
 */
export class BodiesInFlight {
  #bytes = 0;
  readonly #bytesByPrincipal = new Map<string, number>();

  /** Reserves `bytes` for `principal`'s body: the release to call once it is read, or the refusal. */
  reserve(principal: string, bytes: number): InvokeResult<() => void> {
    if (bytes === 0) return ok(() => {});
    const counted = Math.max(bytes, MIN_BODY_BYTES);
    const principalBytes = this.#bytesByPrincipal.get(principal) ?? 0;
    if (principalBytes > 0 && principalBytes + counted > MAX_BODY_BYTES_PER_PRINCIPAL) {
      return rateLimited(
        "Too many bodies in flight: this principal may have 128 MiB of request bodies read at once, " +
          "each counted by its Content-Length (at least 64 KiB)",
        RETRY_AFTER_MS,
      );
    }
    if (this.#bytes > 0 && this.#bytes + counted > MAX_BODY_BYTES_IN_FLIGHT) {
      return fail(
        "NOT_READY",
        "The service is reading as many request bodies as it holds at once (256 MiB); send the request again later.",
        { retryable: true, retryAfterSeconds: RETRY_AFTER_MS / 1000 },
      );
    }
    this.#bytes += counted;
    this.#bytesByPrincipal.set(principal, principalBytes + counted);
    let released = false;
    return ok(() => {
      if (released) return;
      released = true;
      this.#bytes -= counted;
      const left = (this.#bytesByPrincipal.get(principal) ?? counted) - counted;
      if (left === 0) this.#bytesByPrincipal.delete(principal);
      else this.#bytesByPrincipal.set(principal, left);
    });
  }
}
