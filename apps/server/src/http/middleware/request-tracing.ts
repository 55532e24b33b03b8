import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from "@opentelemetry/semantic-conventions";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AppEnv } from "../app-env.js";

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (headers: Headers) => [...headers.keys()],
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
};

/**
 * A server span per request, by OpenTelemetry's HTTP conventions (`GET /v1/sessions/:sessionId`), continuing
 * the caller's trace when it sends a W3C `traceparent`. It is the active span while the request is handled, so a
 * turn's span is its child. A streamed answer's span ends once its stream is open; the turn's goes on.
 * The query string is left out: only the path is recorded.
 */
export function requestTracing(tracer: Tracer): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { method } = c.req;
    const url = new URL(c.req.url);
    const remote = c.var.clientAddress;
    const userAgent = c.req.header("user-agent");
    const parent = propagator.extract(ROOT_CONTEXT, c.req.raw.headers, headerGetter);
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: url.pathname,
          [ATTR_URL_SCHEME]: url.protocol.replace(/:$/, ""),
          ...(remote === undefined ? {} : { [ATTR_CLIENT_ADDRESS]: remote }),
          ...(userAgent === undefined ? {} : { [ATTR_USER_AGENT_ORIGINAL]: userAgent }),
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      // The route that answered, as registered; none for a path no route serves.
      const route = routePath(c, -1);
      if (route !== undefined && !route.endsWith("*")) {
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        span.updateName(`${method} ${route}`);
      }
      const status = c.res.status;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}
