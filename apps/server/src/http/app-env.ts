import type { InvokeError, InvokeWarning } from "@aptix/contracts";
import type { HttpBindings } from "@hono/node-server";
import type { Logger } from "pino";

/** Hono's environment for this app: Node bindings, and what middleware puts on the context. */
export interface AppEnv {
  Bindings: Partial<HttpBindings>;
  Variables: {
    principal: string;
    /** The caller's address (`clientAddressing`): the socket's, or what a trusted proxy forwarded; none in process. */
    clientAddress: string | undefined;
    requestId: string;
    /** The request's logger: every line it writes carries the request id. */
    logger: Logger;
    /** The request's body, read whole by `requestBody` (on `/v1/*`, for every method but GET and HEAD). */
    body: Buffer;
    /** The errors of the failed InvokeResult this request answered, for the access log. */
    resultErrors: InvokeError[] | undefined;
    /** Warnings every answer of the app carries (`AppOptions.notices`). */
    notices: readonly InvokeWarning[] | undefined;
  };
}
