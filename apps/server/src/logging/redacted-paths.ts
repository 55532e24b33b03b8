/**
 * What no log line may carry, by path in a logged object (pino's redaction). Lines name servers, tools and
 * principals; these paths are the backstop for an object logged whole by mistake. A leading `*` (one level of
 * any key) costs about a microsecond a line, so they are few: the secrets' own names, at the top level and one
 * level down.
 */
export const REDACTED_PATHS: readonly string[] = [
  // An MCP server's `env` and `headers` (docs/server-tools.md), alone, in a server or in a list of servers; and
  // any other request's headers.
  "env",
  "*.env",
  "headers",
  "*.headers",
  "mcpServers[*].env",
  "mcpServers[*].headers",
  // Authorization headers and cookies, taken alone.
  "authorization",
  "Authorization",
  "cookie",
  // The service's API keys and the providers' keys, as fields or as environment variables.
  "apiKey",
  "*.apiKey",
  "apiKeys",
  "APTIX_API_KEYS",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
];
