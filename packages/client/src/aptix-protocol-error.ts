/**
 * The server's answer is not one the service gives: a body that is not an InvokeResult (a proxy's error page,
 * a truncated body), or a stream that broke more often than the client resumes. Failures the service reports
 * are never thrown: they come back as an `AptixResult` with `successful: false`.
 */
export class AptixProtocolError extends Error {
  override readonly name = "AptixProtocolError";
  /** The HTTP status of the answer, when there was one. */
  readonly status: number | undefined;

  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
  }
}
