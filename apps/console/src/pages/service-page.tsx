import type { AptixResult } from "@aptix/client";
import type { ReactNode } from "react";
import { useConnection } from "../connection.js";
import { LoadedView } from "../loaded-view.js";
import { fetchServiceDescription, type ServiceDescription } from "../service-description.js";
import { useResult } from "../use-result.js";

interface Readiness {
  status: string;
  degraded?: string[];
}

/** The limits as a person reads them. */
function limitRows(limits: ServiceDescription["limits"]): [string, string][] {
  return [
    ["Request body", `${limits.maxBodyBytes.toLocaleString("en-US")} bytes`],
    ["Requests a minute (per principal)", limits.rateLimitRpm.toLocaleString("en-US")],
    ["LLM calls a request", String(limits.maxLlmCallsPerRequest)],
    ["Turns running at once", String(limits.maxRunningTurns)],
    ["Server tool time", `${limits.toolTimeoutMs.toLocaleString("en-US")} ms`],
  ];
}

/**
 * What the service says of itself: whether it can run turns (`/readyz`), and what it runs with (`/v1/service`):
 * version, store, providers, contexts, modes with their tools, limits.
 */
export function ServicePage() {
  const { headers } = useConnection();
  const readiness = useResult(async (signal): Promise<AptixResult<Readiness>> => {
    const response = await fetch("/readyz", { headers, signal });
    return (await response.json()) as AptixResult<Readiness>;
  }, "readyz");
  const description = useResult((signal) => fetchServiceDescription(headers, signal), "service");
  return (
    <section>
      <h1>Service</h1>
      <h2>Readiness</h2>
      <LoadedView loaded={readiness.loaded}>
        {(ready) => (
          <p>
            <span className="status status-completed">{ready.status}</span>
            {ready.degraded && ready.degraded.length > 0 && ` (slower path: ${ready.degraded.join(", ")})`}
          </p>
        )}
      </LoadedView>
      <p>
        <button type="button" onClick={readiness.reload}>
          Check again
        </button>
      </p>
      <h2>Access</h2>
      <p>
        {headers.authorization
          ? "API keys: requests carry the key entered here."
          : "Local mode: no key is asked, and only this machine is answered."}
      </p>
      <LoadedView loaded={description.loaded}>{(about) => <Described about={about} />}</LoadedView>
    </section>
  );
}

/** What `/v1/service` says: version, store and providers, contexts, modes with their tools, limits. */
function Described({ about }: { about: ServiceDescription }) {
  return (
    <>
      <h2>Version and store</h2>
      <dl>
        <dt>Version</dt>
        <dd>{about.version}</dd>
        <dt>Store</dt>
        <dd>{about.store === "postgres" ? "PostgreSQL" : "PGlite (embedded)"}</dd>
        <dt>Providers</dt>
        <dd>{about.providers.join(", ")}</dd>
      </dl>
      <h2>Conversation contexts</h2>
      <FactsTable
        headers={["Context", "Provider", "Model"]}
        rows={about.conversationContexts.map((context) => [
          <code key="id">{context.id}</code>,
          context.provider,
          context.model,
        ])}
      />
      <h2>Modes</h2>
      <FactsTable
        headers={["Mode", "Id", "Tools", "New sessions start here"]}
        rows={about.modes.map((mode) => [
          mode.displayName,
          <code key="id">{mode.id}</code>,
          mode.tools.join(", "),
          mode.id === about.defaultModeId ? "yes" : "",
        ])}
      />
      <h2>Limits</h2>
      <FactsTable headers={["Limit", "In force"]} rows={limitRows(about.limits)} />
    </>
  );
}

/** A table of facts, one row each, the first cell naming it. */
function FactsTable({ headers, rows }: { headers: string[]; rows: ReactNode[][] }) {
  return (
    <table>
      <thead>
        <tr>
          {headers.map((header) => (
            <th key={header} scope="col">
              {header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((cells, row) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the rows never reorder.
          <tr key={row}>
            {cells.map((cell, column) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a row's cells never reorder.
              <td key={column}>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
