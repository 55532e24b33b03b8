import { z } from "zod";

/**
 * `APTIX_CORS_ORIGINS`: the origins whose pages may call the service from a browser, comma-separated (empty
 * entries skipped); none when unset. Each must be an origin exactly as a browser sends it in `Origin`
 * (`scheme://host[:port]`, lowercase, no default port, no path), so a near miss is refused at start-up instead of
 * silently never matching.
 */
export const CorsOriginsSchema = z
  .string()
  .optional()
  .transform((text, context) => {
    const origins = new Set<string>();
    for (const [index, raw] of (text ?? "").split(",").entries()) {
      const entry = raw.trim();
      if (entry === "") continue;
      const problem = originProblem(entry);
      if (problem !== undefined) {
        context.addIssue({
          code: "custom",
          message: `entry ${index + 1} ${JSON.stringify(entry)} ${problem}`,
        });
        continue;
      }
      origins.add(entry);
    }
    return [...origins];
  });

function originProblem(entry: string): string | undefined {
  const example = "such as https://app.example.com or http://localhost:5173";
  if (!URL.canParse(entry)) return `is not an origin ${example}`;
  const url = new URL(entry);
  if (url.protocol !== "http:" && url.protocol !== "https:") return `must be an http(s) origin ${example}`;
  if (url.origin !== entry) return `must be written as its origin ${url.origin} (scheme, host and port only)`;
  return undefined;
}
