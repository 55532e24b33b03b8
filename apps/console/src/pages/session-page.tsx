import type { AptixResult, SessionMessagesJson, SessionSummaryJson } from "@aptix/client";
import { useRef, useState } from "react";
import { useConnection } from "../connection.js";
import { FileLink } from "../file-link.js";
import { formatTokens, formatUsd } from "../format.js";
import { LoadedView } from "../loaded-view.js";
import { newSessionId } from "../new-session-id.js";
import { hrefOf } from "../route.js";
import { TurnTrace } from "../trace/turn-trace.js";
import { useResult } from "../use-result.js";
import { ToolCallCard } from "./tool-call-card.js";

type Message = SessionMessagesJson["messages"][number];

/** The most messages read (two a turn); a longer session shows its first ones. */
const MAX_MESSAGE_PAGES = 10;

/** A session: its conversation, usage and cost, each turn's trace, and what can be done with it. */
export function SessionPage({ sessionId }: { sessionId: string }) {
  const { client } = useConnection();
  const [notice, setNotice] = useState<string>();
  const { loaded, reload } = useResult(async (signal) => {
    const session = await client.getSession(sessionId, { signal });
    if (!session.successful) return session;
    const messages: Message[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_MESSAGE_PAGES; page++) {
      const answer = await client.sessions.messages(sessionId, {
        limit: 100,
        ...(cursor ? { cursor } : {}),
        signal,
      });
      if (!answer.successful) return answer;
      messages.push(...answer.result.messages);
      cursor = answer.result.nextCursor;
      if (!cursor) break;
    }
    return { ...session, result: { session: session.result, messages } };
  }, sessionId);

  /** Runs an action on the session, says how it went, and reads the session again. */
  const act = async <T,>(action: Promise<AptixResult<T>>, done: (result: T) => string) => {
    const result = await action;
    setNotice(
      result.successful ? done(result.result) : `${result.errors[0].code}: ${result.errors[0].message}`,
    );
    reload();
  };

  /** Makes a new session of the conversation before `atTurnId` and opens it; a refusal shows here instead. */
  const fork = async (atTurnId: string) => {
    const result = await client.fork({ sessionId, newSessionId: newSessionId(), atTurnId });
    if (result.successful)
      window.location.hash = hrefOf({ page: "session", sessionId: result.result.sessionId });
    else setNotice(`${result.errors[0].code}: ${result.errors[0].message}`);
  };

  return (
    <LoadedView loaded={loaded}>
      {({ session, messages }) => {
        const open = session.turns.find(
          (turn) => turn.status === "running" || turn.status === "awaiting_client_tools",
        );
        return (
          <section>
            <h1>Session {session.sessionId}</h1>
            <UsageLine session={session} />
            <div className="actions">
              <a className="button" href={hrefOf({ page: "chat", sessionId })}>
                Continue the chat
              </a>
              {open && (
                <button
                  type="button"
                  onClick={() => act(client.cancel({ sessionId, turnId: open.turnId }), () => "Stopped.")}
                >
                  Stop
                </button>
              )}
              <button
                type="button"
                onClick={() =>
                  act(client.sessions.compact(sessionId), ({ compacted }) =>
                    compacted ? "Compacted." : "Nothing new to compact.",
                  )
                }
              >
                Compact
              </button>
              <DeleteButton sessionId={sessionId} />
            </div>
            {notice && <p role="status">{notice}</p>}
            <Conversation session={session} messages={messages} onFork={fork} />
          </section>
        );
      }}
    </LoadedView>
  );
}

function UsageLine({ session }: { session: SessionSummaryJson }) {
  const { usage, forkedFrom } = session;
  return (
    <dl className="facts">
      {forkedFrom && (
        <>
          <dt>Forked from</dt>
          <dd>
            <a href={hrefOf({ page: "session", sessionId: forkedFrom.sessionId })}>{forkedFrom.sessionId}</a>
            {forkedFrom.turnId ? ` before turn ${forkedFrom.turnId}` : ""}
          </dd>
        </>
      )}
      <dt>Mode</dt>
      <dd>{session.modeDisplayName}</dd>
      <dt>Turns</dt>
      <dd>{session.turns.length}</dd>
      <dt>LLM calls</dt>
      <dd>{usage.llmCalls}</dd>
      <dt>Input tokens</dt>
      <dd>
        {formatTokens(usage.inputTokens)} ({formatTokens(usage.cachedInputTokens)} cached)
      </dd>
      <dt>Output tokens</dt>
      <dd>{formatTokens(usage.outputTokens)}</dd>
      <dt>Cost</dt>
      <dd>{formatUsd(usage.costUsd)}</dd>
      <dt>Context</dt>
      <dd>
        {formatTokens(session.contextTokens ?? undefined)} of {formatTokens(session.contextWindowTokens)}{" "}
        tokens
      </dd>
    </dl>
  );
}

/**
 * The messages turn by turn with each turn's trace, and a marker where the conversation was compacted: before the
 * turn that compacted it on its way, after the last turn for one asked for (`manual`).
 */
function Conversation({
  session,
  messages,
  onFork,
}: {
  session: SessionSummaryJson;
  messages: Message[];
  onFork: (atTurnId: string) => void;
}) {
  return (
    <ol className="conversation">
      {session.turns.map((turn) => {
        const turnMessages = messages.filter((message) => message.turnId === turn.turnId);
        const compactionsOf = (manual: boolean) =>
          session.compactions.filter(
            (compaction) => compaction.turnId === turn.turnId && (compaction.reason === "manual") === manual,
          );
        return (
          <li key={turn.turnId} className="turn">
            <CompactionMarkers compactions={compactionsOf(false)} />
            {turnMessages.map((message) => (
              <MessageView key={`${message.turnId}:${message.role}`} message={message} />
            ))}
            <p className="turn-line">
              Turn {turn.sequence}: <span className={`status status-${turn.status}`}>{turn.status}</span>{" "}
              <button type="button" className="quiet" onClick={() => onFork(turn.turnId)}>
                Fork from here
              </button>
            </p>
            <TurnTrace sessionId={session.sessionId} turnId={turn.turnId} />
            <CompactionMarkers compactions={compactionsOf(true)} />
          </li>
        );
      })}
    </ol>
  );
}

function CompactionMarkers({ compactions }: { compactions: SessionSummaryJson["compactions"] }) {
  return compactions.map((compaction) => (
    <p key={compaction.createdAt} className="compaction" role="note">
      Conversation compacted ({compaction.reason}): {formatTokens(compaction.tokensBefore)} →{" "}
      {formatTokens(compaction.tokensAfter)} tokens
    </p>
  ));
}

function MessageView({ message }: { message: Message }) {
  return (
    <article
      className={`message message-${message.role}`}
      aria-label={message.role === "user" ? "User" : "Assistant"}
    >
      {message.toolCalls?.map((call, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a turn's calls keep their order and have no id here.
        <ToolCallCard key={index} call={call} />
      ))}
      {message.text && <p className="text">{message.text}</p>}
      {message.files && message.files.length > 0 && (
        <ul className="files">
          {message.files.map((file) => (
            <li key={file.url}>
              <FileLink url={file.url} name={file.name} />
            </li>
          ))}
        </ul>
      )}
      {message.error && (
        <p role="alert" className="error">
          {message.error.code}: {message.error.message}
        </p>
      )}
    </article>
  );
}

/** Deletes the session once the user confirms it in a dialog, then goes back to the list. */
function DeleteButton({ sessionId }: { sessionId: string }) {
  const { client } = useConnection();
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string>();
  const remove = async () => {
    const result = await client.sessions.delete(sessionId);
    if (result.successful) {
      dialog.current?.close();
      window.location.hash = hrefOf({ page: "sessions" });
    } else setError(`${result.errors[0].code}: ${result.errors[0].message}`);
  };
  return (
    <>
      <button type="button" className="danger" onClick={() => dialog.current?.showModal()}>
        Delete
      </button>
      <dialog ref={dialog} aria-labelledby="delete-title">
        <h2 id="delete-title">Delete this session?</h2>
        <p>Its turns, traces and files are deleted too. This cannot be undone.</p>
        {error && <p role="alert">{error}</p>}
        <div className="actions">
          <button type="button" className="danger" onClick={remove}>
            Delete session
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Keep it
          </button>
        </div>
      </dialog>
    </>
  );
}
