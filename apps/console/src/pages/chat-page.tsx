import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, isToolUIPart, type UIMessage } from "ai";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { everyCallAnswered } from "../chat/every-call-answered.js";
import { useConnection } from "../connection.js";
import { FileLink } from "../file-link.js";
import { LoadedView } from "../loaded-view.js";
import { newSessionId } from "../new-session-id.js";
import { hrefOf } from "../route.js";
import { fetchServiceDescription } from "../service-description.js";
import { useResult } from "../use-result.js";
import { ChatToolPart, type ToolPart } from "./chat-tool-part.js";

/**
 * A chat over the service's AI SDK UI message stream (`/v1/chat`) with a stock `useChat`: a new session, or one
 * continued, whose conversation so far is read first (`GET /v1/chat/:id/messages`).
 */
export function ChatPage({ sessionId }: { sessionId?: string }) {
  const { headers } = useConnection();
  const [initial, setInitial] = useState<UIMessage[] | string | undefined>(sessionId ? undefined : []);
  useEffect(() => {
    if (sessionId === undefined) return;
    const controller = new AbortController();
    fetch(`/v1/chat/${encodeURIComponent(sessionId)}/messages`, { headers, signal: controller.signal })
      .then(async (response) => {
        const body: unknown = await response.json();
        setInitial(
          response.ok ? (body as UIMessage[]) : `The conversation could not be read (${response.status}).`,
        );
      })
      .catch((error: unknown) => {
        if (!controller.signal.aborted) setInitial(String(error));
      });
    return () => controller.abort();
  }, [sessionId, headers]);
  if (initial === undefined) return <p aria-busy="true">Loading…</p>;
  if (typeof initial === "string") return <p role="alert">{initial}</p>;
  return <Chat sessionId={sessionId} initialMessages={initial} />;
}

function Chat({ sessionId, initialMessages }: { sessionId?: string; initialMessages: UIMessage[] }) {
  const { headers } = useConnection();
  const id = useMemo(() => sessionId ?? newSessionId(), [sessionId]);
  const [conversationContextId, setConversationContextId] = useState("");
  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: "/v1/chat",
        headers,
        body: () => (conversationContextId ? { conversationContextId } : {}),
      }),
    [headers, conversationContextId],
  );
  const { messages, sendMessage, status, stop, error, addToolOutput, addToolApprovalResponse } = useChat({
    id,
    messages: initialMessages,
    transport,
    // A session continued may have a turn running: its stream is picked up (the service answers 204 when none).
    resume: sessionId !== undefined,
    sendAutomaticallyWhen: everyCallAnswered,
  });
  const busy = status === "submitted" || status === "streaming";
  const [stopped, setStopped] = useState(false);
  const send = (text: string) => {
    setStopped(false);
    void sendMessage({ text });
  };
  // useChat's stop only stops reading: the stop route cancels the turn wherever it runs, then the reading ends.
  const stopTurn = async () => {
    await fetch(`/v1/chat/${encodeURIComponent(id)}/stop`, { method: "POST", headers });
    await stop();
    setStopped(true);
  };

  return (
    <section className="chat">
      <h1>{sessionId ? `Chat in ${sessionId}` : "New chat"}</h1>
      {!sessionId && messages.length === 0 && (
        <ContextField value={conversationContextId} onChange={setConversationContextId} />
      )}
      <ol className="conversation" aria-live="polite">
        {messages.map((message) => (
          <li key={message.id}>
            <ChatMessage
              message={message}
              onOutput={(part, output) =>
                addToolOutput({ tool: toolName(part), toolCallId: part.toolCallId, output } as never)
              }
              onError={(part, errorText) =>
                addToolOutput({
                  state: "output-error",
                  tool: toolName(part),
                  toolCallId: part.toolCallId,
                  errorText,
                } as never)
              }
              onApproval={(approvalId, approved) =>
                addToolApprovalResponse({
                  id: approvalId,
                  approved,
                  ...(approved ? {} : { reason: "Declined in the console." }),
                })
              }
            />
          </li>
        ))}
      </ol>
      {stopped && <p role="status">Stopped: nothing of the turn was kept.</p>}
      {error && <p role="alert">{error.message}</p>}
      {messages.length > 0 && <a href={hrefOf({ page: "session", sessionId: id })}>Open the session</a>}
      <Composer busy={busy} onSend={send} onStop={stopTurn} />
    </section>
  );
}

/**
 * A new session's conversation context (its prompt, model and first mode), chosen among the service's
 * (`/v1/service`); empty is the service's default, the first. The mode is shown, not chosen: the service starts
 * a session in its context's mode and changes it as the chat goes.
 */
function ContextField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const { headers } = useConnection();
  const description = useResult((signal) => fetchServiceDescription(headers, signal), "service");
  return (
    <LoadedView loaded={description.loaded}>
      {({ conversationContexts, modes }) => {
        const chosen = conversationContexts.find(({ id }) => id === value) ?? conversationContexts[0];
        const mode = modes.find(({ id }) => id === chosen?.defaultModeId);
        return (
          <p>
            <label>
              Conversation context{" "}
              <select
                value={chosen?.id ?? ""}
                onChange={(event) =>
                  onChange(event.target.value === conversationContexts[0]?.id ? "" : event.target.value)
                }
              >
                {conversationContexts.map((context) => (
                  <option key={context.id} value={context.id}>
                    {context.id} ({context.provider} {context.model})
                  </option>
                ))}
              </select>
            </label>{" "}
            <span>Starts in mode {mode?.displayName ?? chosen?.defaultModeId}</span>
          </p>
        );
      }}
    </LoadedView>
  );
}

/** The textbox "Message" with "Send" (or Enter), and "Stop" while a turn runs. */
function Composer({
  busy,
  onSend,
  onStop,
}: {
  busy: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
}) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const text = String(new FormData(form).get("message") ?? "").trim();
    if (text === "") return;
    onSend(text);
    form.reset();
  };
  return (
    <form className="composer" onSubmit={submit}>
      <label>
        Message
        <textarea
          name="message"
          rows={3}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey) {
              event.preventDefault();
              event.currentTarget.form?.requestSubmit();
            }
          }}
        />
      </label>
      <div className="actions">
        <button type="submit" disabled={busy}>
          Send
        </button>
        {busy && (
          <button type="button" onClick={onStop}>
            Stop
          </button>
        )}
      </div>
    </form>
  );
}

interface MessageHandlers {
  onOutput: (part: ToolPart, output: unknown) => void;
  onError: (part: ToolPart, errorText: string) => void;
  onApproval: (approvalId: string, approved: boolean) => void;
}

function ChatMessage({ message, ...handlers }: { message: UIMessage } & MessageHandlers) {
  // A turn stopped before its first word leaves an assistant message of steps alone.
  if (message.parts.every((part) => part.type === "step-start")) return null;
  return (
    <article
      className={`message message-${message.role}`}
      aria-label={message.role === "user" ? "User" : "Assistant"}
    >
      {message.parts.map((part, index) => {
        const key = `${message.id}:${index}`;
        if (part.type === "text") {
          return (
            <p key={key} className="text">
              {part.text}
            </p>
          );
        }
        if (part.type === "file") {
          // The stream's file parts carry no name: the tool's card above shows it.
          return <FileLink key={key} url={part.url} name={part.filename ?? `${part.mediaType} file`} />;
        }
        if (part.type.startsWith("data-aptix-"))
          return <DataPart key={key} type={part.type} data={dataOf(part)} />;
        if (isToolUIPart(part)) return <ChatToolPart key={key} part={part} {...handlers} />;
        return null;
      })}
    </article>
  );
}

/** The service's own parts: a compaction, a warning, the error a failed or cancelled turn ended with. */
function DataPart({ type, data }: { type: string; data: Record<string, unknown> }) {
  if (type === "data-aptix-compaction") {
    return (
      <p className="compaction" role="note">
        Conversation compacted ({String(data.reason)}): {String(data.tokensBefore)} →{" "}
        {String(data.tokensAfter)} tokens
      </p>
    );
  }
  const line = `${String(data.code)}: ${String(data.message)}`;
  return type === "data-aptix-error" ? <p role="alert">{line}</p> : <p role="note">{line}</p>;
}

function dataOf(part: UIMessage["parts"][number]): Record<string, unknown> {
  const data = "data" in part ? part.data : undefined;
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
}

function toolName(part: ToolPart): string {
  return part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
}
