import type { AptixClient, AptixResult } from "@aptix/client";
import type { UsageReport } from "@aptix/contracts";
import { useMemo, useState } from "react";
import { useConnection } from "../connection.js";
import { formatTokens, formatUsd } from "../format.js";
import { LoadedView } from "../loaded-view.js";
import { hrefOf } from "../route.js";
import { UsageChart } from "../usage/usage-chart.js";
import type { UsageRow } from "../usage/usage-rows.js";
import { usageSeries } from "../usage/usage-series.js";
import { useResult } from "../use-result.js";

const TOP_SESSIONS = 10;
/** The most pages of sessions read for the top ten: 500 sessions a page. */
const MAX_SESSION_PAGES = 20;

interface Figures {
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

interface UsageView {
  rows: UsageRow[];
  total: Figures;
  top: (Figures & { key: string })[];
}

/** Tokens and cost per day by model for a range, as a chart and as a table, and the costliest sessions. */
export function UsagePage() {
  const { client } = useConnection();
  const [range, setRange] = useState(currentMonth);
  const { loaded } = useResult((signal) => usageView(client, range, signal), `${range.from}\n${range.to}`);
  return (
    <section>
      <h1>Usage</h1>
      <form
        className="filters"
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          setRange({ from: String(form.get("from")), to: String(form.get("to")) });
        }}
      >
        <label>
          From
          <input type="date" name="from" defaultValue={range.from} required />
        </label>
        <label>
          To
          <input type="date" name="to" defaultValue={range.to} required />
        </label>
        <button type="submit">Show</button>
      </form>
      <LoadedView loaded={loaded}>{(view) => <UsageFigures view={view} range={range} />}</LoadedView>
    </section>
  );
}

function UsageFigures({ view, range }: { view: UsageView; range: { from: string; to: string } }) {
  const series = useMemo(() => usageSeries(view.rows, range), [view.rows, range]);
  if (view.rows.length === 0) return <p>No LLM call in this range.</p>;
  return (
    <>
      <UsageChart series={series} />
      <table aria-label="Usage by day and model">
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Model</th>
            <FigureHeaders />
          </tr>
        </thead>
        <tbody>
          {view.rows.map((row) => (
            <tr key={`${row.day}\n${row.model}`}>
              <td>{row.day}</td>
              <td>{row.model}</td>
              <FigureCells figures={row} />
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={2}>
              Total
            </th>
            <FigureCells figures={view.total} />
          </tr>
        </tfoot>
      </table>
      <h2>Top sessions by cost</h2>
      <table aria-label="Top sessions by cost">
        <thead>
          <tr>
            <th scope="col">Session</th>
            <FigureHeaders />
          </tr>
        </thead>
        <tbody>
          {view.top.map((bucket) => (
            <tr key={bucket.key}>
              <td>
                {bucket.key === "" ? (
                  "Outside any session (embeddings)"
                ) : (
                  <a href={hrefOf({ page: "session", sessionId: bucket.key })}>{bucket.key}</a>
                )}
              </td>
              <FigureCells figures={bucket} />
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The figures both tables show, in the same columns. */
function FigureHeaders() {
  return (
    <>
      <th scope="col" className="number">
        Input tokens
      </th>
      <th scope="col" className="number">
        Output tokens
      </th>
      <th scope="col" className="number">
        Cost (USD)
      </th>
    </>
  );
}

function FigureCells({ figures }: { figures: Figures }) {
  return (
    <>
      <td className="number">{formatTokens(figures.inputTokens)}</td>
      <td className="number">{formatTokens(figures.outputTokens)}</td>
      <td className="number">{formatUsd(figures.costUsd)}</td>
    </>
  );
}

/**
 * The range's usage by day and model. The service groups by one of them at a time, so each day that has usage is
 * asked again grouped by model; the rows add up to the by-day figures.
 */
async function usageView(
  client: AptixClient,
  range: { from: string; to: string },
  signal: AbortSignal,
): Promise<AptixResult<UsageView>> {
  const byDay = await client.usage({ ...range, groupBy: "day", signal });
  if (!byDay.successful) return byDay;
  const days = byDay.result.buckets.filter((bucket) => bucket.llmCalls > 0).map((bucket) => bucket.key);
  const rows: UsageRow[] = [];
  for (const day of days) {
    const byModel = await client.usage({ from: day, to: day, groupBy: "model", signal });
    if (!byModel.successful) return byModel;
    for (const bucket of byModel.result.buckets) {
      if (bucket.llmCalls === 0) continue;
      const { inputTokens, outputTokens, costUsd } = bucket;
      rows.push({ day, model: bucket.key, inputTokens, outputTokens, costUsd });
    }
  }
  const sessions: UsageReport["buckets"] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_SESSION_PAGES; page++) {
    const bySession = await client.usage({ ...range, groupBy: "session", limit: 500, cursor, signal });
    if (!bySession.successful) return bySession;
    sessions.push(...bySession.result.buckets);
    cursor = bySession.result.nextCursor;
    if (!cursor) break;
  }
  const top = sessions
    .sort(
      (a, b) =>
        (b.costUsd ?? -1) - (a.costUsd ?? -1) ||
        b.inputTokens + b.outputTokens - a.inputTokens - a.outputTokens,
    )
    .slice(0, TOP_SESSIONS);
  return { ...byDay, result: { rows, total: byDay.result.total, top } };
}

/** The current UTC month up to today, the range the service defaults to. */
function currentMonth(): { from: string; to: string } {
  const today = new Date().toISOString().slice(0, 10);
  return { from: `${today.slice(0, 8)}01`, to: today };
}
