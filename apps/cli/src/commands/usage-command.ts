import type { UsageReport } from "@aptix/contracts";
import { plural } from "../terminal/plural.js";
import { visibleJson } from "../terminal/visible.js";
import { type CliContext, EXIT } from "./cli-context.js";

type Totals = UsageReport["total"];

/** A bucket's or the total's figures on one line: tokens in (cached), out, calls, and USD (or "unpriced"). */
function figures(totals: Totals): string {
  const cost = totals.costUsd === null ? "unpriced" : `$${totals.costUsd.toFixed(4)}`;
  return `${totals.inputTokens} in (${totals.cachedInputTokens} cached) · ${totals.outputTokens} out · ${plural(totals.llmCalls, "call")} · ${cost}`;
}

/** Every page of the report: the session grouping is paged, and the user asked for the whole range. */
async function allPages(
  { client }: CliContext,
  query: Parameters<CliContext["client"]["usage"]>[0],
): ReturnType<CliContext["client"]["usage"]> {
  const first = await client.usage(query);
  if (!first.successful) return first;
  const buckets = [...first.result.buckets];
  let cursor = first.result.nextCursor;
  // A cursor seen before would read the same page again, for ever: a service that answers one is done.
  const seen = new Set<string>();
  while (cursor !== undefined && !seen.has(cursor)) {
    seen.add(cursor);
    const page = await client.usage({ ...query, cursor });
    if (!page.successful) return page;
    buckets.push(...page.result.buckets);
    cursor = page.result.nextCursor;
  }
  const { nextCursor: _last, ...report } = first.result;
  return { ...first, result: { ...report, buckets } };
}

/** `aptix usage`: the caller's usage and its cost by day, model or session, then the total (`GET /v1/usage`). */
export async function usageCommand(
  context: CliContext,
  query: { from?: string; to?: string; groupBy?: string },
): Promise<number> {
  const { client, terminal, options } = context;
  const answer = await allPages(context, query as Parameters<typeof client.usage>[0]);
  if (options.json) {
    context.streams.stdout.write(`${visibleJson(answer.successful ? answer.result : answer)}\n`);
    return answer.successful ? EXIT.done : EXIT.failed;
  }
  if (!answer.successful) {
    for (const error of answer.errors)
      terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
    return EXIT.failed;
  }
  for (const bucket of answer.result.buckets) {
    terminal.line(
      terminal.compose`${terminal.style("bold", bucket.key)} ${terminal.style("dim", figures(bucket))}`,
    );
  }
  if (answer.result.buckets.length === 0) terminal.line(terminal.style("dim", "no usage"));
  terminal.line(terminal.compose`${terminal.style("bold", "total")} ${figures(answer.result.total)}`);
  return EXIT.done;
}
