import type { InvokeError } from "@aptix/contracts";

/**
 * `result`, its INTERNAL errors given `details.requestId` (unless they have one): such a failure says only that
 * the service failed, and the request id is what finds its detail in the operator's logs and traces.
 */
export function withRequestId<R extends { successful: boolean; errors: InvokeError[] }>(
  result: R,
  requestId: string,
): R {
  if (result.successful || !result.errors.some(needsId)) return result;
  const errors = result.errors.map((error) =>
    needsId(error) ? { ...error, details: { ...error.details, requestId } } : error,
  );
  return { ...result, errors };
}

function needsId(error: InvokeError): boolean {
  return error.code === "INTERNAL" && error.details?.requestId === undefined;
}
