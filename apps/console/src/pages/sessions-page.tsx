import type { SessionListJson } from "@aptix/client";
import { SESSION_TITLE_LENGTH } from "@aptix/contracts";
import { useState } from "react";
import { useConnection } from "../connection.js";
import { formatTime } from "../format.js";
import { LoadedView } from "../loaded-view.js";
import { hrefOf } from "../route.js";
import { useResult } from "../use-result.js";

const PAGE_SIZE = 20;

/** The principal's sessions, most recently active first: a workspace filter, a title search, pages of 20 of them. */
export function SessionsPage() {
  const { client } = useConnection();
  const [workspaceId, setWorkspaceId] = useState("");
  const [search, setSearch] = useState("");
  // The cursors of the pages before the shown one; the shown page's own is the last.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors.at(-1);
  // The service searches every session, so each page holds matches only and the pager goes through them.
  const q = search.trim();
  const { loaded } = useResult(
    (signal) =>
      client.sessions.list({
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
        ...(workspaceId ? { workspaceId } : {}),
        ...(q ? { q } : {}),
        signal,
      }),
    `${workspaceId}\n${q}\n${cursor ?? ""}`,
  );
  return (
    <section>
      <h1>Sessions</h1>
      <div className="filters">
        <label>
          Workspace
          <input
            value={workspaceId}
            onChange={(event) => {
              setWorkspaceId(event.target.value.trim());
              setCursors([undefined]);
            }}
            placeholder="any"
          />
        </label>
        <label>
          Search titles
          <input
            type="search"
            value={search}
            maxLength={SESSION_TITLE_LENGTH}
            onChange={(event) => {
              setSearch(event.target.value);
              setCursors([undefined]);
            }}
          />
        </label>
      </div>
      <LoadedView loaded={loaded}>
        {({ sessions, nextCursor }) => (
          <>
            {sessions.length === 0 ? (
              <p>No sessions{q || workspaceId ? " match" : " yet: start one under New chat"}.</p>
            ) : (
              <SessionTable sessions={sessions} />
            )}
            <nav aria-label="Pages" className="pager">
              <button
                type="button"
                disabled={cursors.length === 1}
                onClick={() => setCursors((before) => before.slice(0, -1))}
              >
                Previous page
              </button>
              <button
                type="button"
                disabled={!nextCursor}
                onClick={() => setCursors((before) => [...before, nextCursor])}
              >
                Next page
              </button>
            </nav>
          </>
        )}
      </LoadedView>
    </section>
  );
}

type SessionSummary = SessionListJson["sessions"][number];

function SessionTable({ sessions }: { sessions: SessionSummary[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Title</th>
          <th scope="col">Mode</th>
          <th scope="col" className="number">
            Turns
          </th>
          <th scope="col">Last status</th>
          <th scope="col">Workspace</th>
          <th scope="col">Updated</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((session) => (
          <tr key={session.sessionId}>
            <td>
              <a href={hrefOf({ page: "session", sessionId: session.sessionId })}>
                {session.title || session.sessionId}
              </a>
            </td>
            <td>{session.modeDisplayName}</td>
            <td className="number">{session.turnCount}</td>
            <td>
              <span className={`status status-${session.lastTurnStatus}`}>{session.lastTurnStatus}</span>
            </td>
            <td>{session.workspaceId ?? ""}</td>
            <td>{formatTime(session.updatedAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
