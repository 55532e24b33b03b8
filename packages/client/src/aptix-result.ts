import type { ErrorCode, InvokeWarning } from "@aptix/contracts";

/**
 * An error of an answer. `code` is one of the contracts' `ErrorCode`s, or a code a later server version added:
 * a client handles the codes it knows and treats any other as a failure it shows (`message`).
 */
export interface AptixResultError {
  code: ErrorCode | (string & {});
  message: string;
  details?: Record<string, unknown>;
  /** Fields a later server version may add to an error are kept. */
  [field: string]: unknown;
}

/**
 * The envelope of every answer, as the client reads it: the contracts' `InvokeResult`, except that an error's
 * `code` may be one this client does not know yet, and fields added in later minor versions are kept.
 */
export type AptixResult<T> =
  | { successful: true; result: T; errors: []; warnings: InvokeWarning[] }
  | { successful: false; errors: [AptixResultError, ...AptixResultError[]]; warnings: InvokeWarning[] };
