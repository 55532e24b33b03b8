/**
 * A fresh session id (a new chat's, a fork's): `crypto.randomUUID` is missing on a page served over plain HTTP
 * from a host other than localhost, `getRandomValues` is not.
 */
export function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `console-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}
