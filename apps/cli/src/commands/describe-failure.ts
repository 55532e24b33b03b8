import { AptixProtocolError } from "@aptix/client";

/** A failure that is not the service's answer: unreachable service, a workspace that does not exist, … */
export function describeFailure(error: unknown, url: string): string {
  if (error instanceof AptixProtocolError)
    return `the service at ${url} answered unexpectedly: ${error.message}`;
  if (error instanceof TypeError && error.message === "fetch failed") {
    const cause = (error.cause as Error | undefined)?.message;
    return `cannot reach the service at ${url}${cause ? `: ${cause}` : ""}`;
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR")
    return `the workspace does not exist: ${(error as Error).message}`;
  return error instanceof Error ? error.message : String(error);
}
