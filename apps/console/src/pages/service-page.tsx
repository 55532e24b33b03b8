import type { AptixResult } from "@aptix/client";
import { useConnection } from "../connection.js";
import { LoadedView } from "../loaded-view.js";
import { useResult } from "../use-result.js";

interface Readiness {
  status: string;
  degraded?: string[];
}

/** What the service says of itself: whether it can run turns, and its modes. */
export function ServicePage() {
  const { client, headers } = useConnection();
  const readiness = useResult(async (signal): Promise<AptixResult<Readiness>> => {
    const response = await fetch("/readyz", { headers, signal });
    return (await response.json()) as AptixResult<Readiness>;
  }, "readyz");
  const modes = useResult((signal) => client.modes({ signal }), "modes");
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
      <h2>Modes</h2>
      <LoadedView loaded={modes.loaded}>
        {({ modes: list, defaultModeId }) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Mode</th>
                <th scope="col">Id</th>
                <th scope="col">New sessions start here</th>
              </tr>
            </thead>
            <tbody>
              {list.map((mode) => (
                <tr key={mode.id}>
                  <td>{mode.displayName}</td>
                  <td>
                    <code>{mode.id}</code>
                  </td>
                  <td>{mode.id === defaultModeId ? "yes" : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </LoadedView>
    </section>
  );
}
