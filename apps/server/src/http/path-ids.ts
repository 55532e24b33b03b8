import { fail, IdentifierSchema, type InvokeFailure } from "@aptix/contracts";
import type { AgentService } from "@aptix/core";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.js";
import { sendResult } from "./send-result.js";

const isIdentifier = (id: string) => IdentifierSchema.safeParse(id).success;

/**
 * The ids of a path (`sessionId`, `turnId`, `fileId`) follow the contracts' identifier rules, as client ids
 * and the file ids core mints (`file_` and hex) do. One that breaks them (a NUL, which Postgres cannot even
 * compare; an escape of no UTF-8, which Hono leaves undecoded, `%`s and all) names nothing: it answers as an
 * unknown id does, with the same body, before any store sees it.
 */
export function knownPathIds(service: AgentService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const unknown = await unknownPathId(service, c.get("principal"), c.req.param());
    return unknown === undefined ? next() : sendResult(c, unknown);
  };
}

async function unknownPathId(
  service: AgentService,
  principal: string,
  { sessionId, turnId, fileId }: Partial<Record<string, string>>,
): Promise<InvokeFailure | undefined> {
  // The bodies AgentService answers for unknown ids (getFile, getSession, getTurnTrace).
  if (fileId !== undefined && !isIdentifier(fileId)) {
    return fail("FILE_NOT_FOUND", `No file ${JSON.stringify(fileId)}.`, { fileId });
  }
  if (sessionId === undefined) return undefined;
  if (!isIdentifier(sessionId)) {
    return fail("SESSION_NOT_FOUND", `No session ${JSON.stringify(sessionId)}.`, { sessionId });
  }
  if (turnId === undefined || isIdentifier(turnId)) return undefined;
  // Whether the session exists decides which of the two an unknown turn of it answers.
  const session = await service.getSession(principal, sessionId);
  if (!session.successful) return session;
  return fail("TURN_NOT_FOUND", `No turn ${JSON.stringify(turnId)} in this session.`, { turnId });
}
