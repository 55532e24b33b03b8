import { AptixProtocolError } from "./aptix-protocol-error.js";
import type { AptixResult } from "./aptix-result.js";
import { type HttpTransport, jsonBody } from "./http-transport.js";
import type { ResultReader } from "./lenient-schemas.js";

export interface JsonCallOptions {
  /** Sent as the JSON body. */
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/**
 * One request to a JSON route, its answer read with `read` (retries of "later" answers included); an answer that
 * is not an InvokeResult is an `AptixProtocolError`.
 */
export async function callJson<T>(
  transport: HttpTransport,
  method: string,
  path: string,
  read: ResultReader<T>,
  options: JsonCallOptions = {},
): Promise<AptixResult<T>> {
  const response = await transport.send(method, path, options);
  return readOrThrow(response.status, await jsonBody(response), read);
}

/** The answer read with `read`, or an `AptixProtocolError` naming the status when it is not an InvokeResult. */
export function readOrThrow<T>(status: number, body: unknown, read: ResultReader<T>): AptixResult<T> {
  const result = read(body);
  if (result === undefined)
    throw new AptixProtocolError(`HTTP ${status}: the body is not an InvokeResult`, { status });
  return result;
}
