import { useChat } from "@ai-sdk/react";
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from "ai";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { useConnection } from "../connection.js";
import { hrefOf } from "../route.js";
import { ChatToolPart, type ToolPart } from "./chat-tool-part.js";

/**
 * A chat over the service's AI SDK UI message stream (`/v1/chat`) with a stock `useChat`: the session is the
 * chat's id (a new one, or the session being continued), and a new session may name its conversation context.
 */
export function ChatPage({ sessionId }: { sessionId?: string }) {
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
  const { messages, setMessages, sendMessage, status, stop, error, addToolOutput, addToolApprovalResponse } =
    useChat({
      id,
      transport,
      // A session continued may have a turn running: its stream is picked up (the service answers 204 when none).
      resume: sessionId !== undefined,
      // Once every awaited call has an answer or a decision, the continuation goes out by itself.
      sendAutomaticallyWhen: (options) =>
        lastAssistantMessageIsCompleteWithToolCalls(options) ||
        lastAssistantMessageIsCompleteWithApprovalResponses(options),
    });
  // A session continued shows its conversation so far, as the service keeps it.
  useEffect(() => {
    if (sessionId === undefined) return;
    const controller = new AbortController();
    fetch(`/v1/chat/${encodeURIComponent(sessionId)}/messages`, { headers, signal: controller.signal })
      .then((response) => (response.ok ? response.json() : undefined))
      .then((body: { result?: UIMessage[] } | UIMessage[] | undefined) => {
        const stored = Array.isArray(body) ? body : body?.result;
        if (stored) setMessages(stored);
      })
      .catch(() => undefined);
    return () => controller.abort();
  }, [sessionId, headers, setMessages]);
  const busy = status === "submitted" || status === "streaming";
  const send = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const text = String(new FormData(form).get("message") ?? "").trim();
    if (text === "") return;
    void sendMessage({ text });
    form.reset();
  };
  // Stopping the fetch alone would leave the turn running on the server: the stop route cancels it.
  const stopTurn = () => {
    stop();
    void fetch(`/v1/chat/${encodeURIComponent(id)}/stop`, { method: "POST", headers });
  };
  return (
    <section className="chat">
      <h1>{sessionId ? `Chat in ${sessionId}` : "New chat"}</h1>
      {!sessionId && messages.length === 0 && (
        <label>
          Conversation context
          <input
            value={conversationContextId}
            onChange={(event) => setConversationContextId(event.target.value.trim())}
            placeholder="the service's default"
          />
        </label>
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
              onApproval={(approvalId, approved) => addToolApprovalResponse({ id: approvalId, approved })}
            />
          </li>
        ))}
      </ol>
      {error && <p role="alert">{error.message}</p>}
      {messages.length > 0 && <a href={hrefOf({ page: "session", sessionId: id })}>Open the session</a>}
      <form className="composer" onSubmit={send}>
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
            <button type="button" onClick={stopTurn}>
              Stop
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

interface MessageHandlers {
  onOutput: (part: ToolPart, output: unknown) => void;
  onError: (part: ToolPart, errorText: string) => void;
  onApproval: (approvalId: string, approved: boolean) => void;
}

function ChatMessage({ message, ...handlers }: { message: UIMessage } & MessageHandlers) {
  return (
    <article
      className={`message message-${message.role}`}
      aria-label={message.role === "user" ? "User" : "Assistant"}
    >
      {message.parts.map((part, index) => {
        const key = `${message.id}:${index}`;
        if (part.type === "text")
          return (
            <p key={key} className="text">
              {part.text}
            </p>
          );
        if (part.type === "file") {
          return (
            <a key={key} href={part.url} download={part.filename}>
              {part.filename ?? "file"}
            </a>
          );
        }
        if (part.type === "data-aptix-compaction")
          return (
            <p key={key} className="compaction" role="note">
              Conversation compacted
            </p>
          );
        if (part.type === "data-aptix-warning")
          return (
            <p key={key} role="note">
              {JSON.stringify(part.data)}
            </p>
          );
        if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
          return <ChatToolPart key={key} part={part as ToolPart} {...handlers} />;
        }
        return null;
      })}
    </article>
  );
}

/** A fresh session id; `crypto.randomUUID` is missing on a page served over plain HTTP from another host. */
function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `console-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

function toolName(part: ToolPart): string {
  return part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
}
