import type { Context } from "hono";
import type { AppEnv } from "./app-env.js";

/**
 * The address of the socket the request came on; undefined for in-process requests (tests). Headers such as
 * `X-Forwarded-For` are not read: any caller can write them.
 */
export function clientAddress(c: Context<AppEnv>): string | undefined {
  return c.env?.incoming?.socket?.remoteAddress;
}
