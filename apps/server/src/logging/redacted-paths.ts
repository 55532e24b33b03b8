/**
 * What no log line may carry, by path in a logged object (pino's redaction: `*` is one level of any key). Lines
 * name servers, tools and principals; these paths are the backstop for an object logged whole by mistake.
 */
export const REDACTED_PATHS: readonly string[] = [
  // An MCP server's `env` and `headers` (docs/server-tools.md), or any other request's headers.
  "env",
  "*.env",
  "headers",
  "*.headers",
  "mcpServers[*].env",
  "mcpServers[*].headers",
  "*.mcpServers[*].env",
  "*.mcpServers[*].headers",
  // Authorization headers, and cookies, taken alone.
  "authorization",
  "*.authorization",
  "Authorization",
  "*.Authorization",
  "cookie",
  "*.cookie",
  // The service's API keys and the providers' keys, as fields or as environment variables.
  "apiKey",
  "*.apiKey",
  "apiKeys",
  "*.apiKeys",
  "APTIX_API_KEYS",
  "*.APTIX_API_KEYS",
  "OPENAI_API_KEY",
  "*.OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "*.ANTHROPIC_API_KEY",
];
