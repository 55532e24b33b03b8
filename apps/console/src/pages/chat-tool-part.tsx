import type { DynamicToolUIPart, ToolUIPart } from "ai";
import { type FormEvent, useState } from "react";
import { pretty } from "./tool-call-card.js";

export type ToolPart = ToolUIPart | DynamicToolUIPart;

/** A call's state as the card says it. */
const STATES: Record<ToolPart["state"], string> = {
  "input-streaming": "being written",
  "input-available": "waiting for a result",
  "approval-requested": "asks to run",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "failed",
  "output-denied": "declined",
};

interface Props {
  part: ToolPart;
  onOutput: (part: ToolPart, output: unknown) => void;
  onError: (part: ToolPart, errorText: string) => void;
  onApproval: (approvalId: string, approved: boolean) => void;
}

/**
 * A tool call of the chat. A server tool shows its input and output; one that asks first has "Approve" and
 * "Decline"; a client tool waits for the user, who has the workspace the console lacks, to type its result or
 * decline it.
 */
export function ChatToolPart({ part, onOutput, onError, onApproval }: Props) {
  const name = part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
  const [invalid, setInvalid] = useState<string>();
  const input = JSON.stringify(part.input ?? null, null, 2);
  const answer = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget).get("result") ?? "");
    try {
      onOutput(part, JSON.parse(text));
    } catch {
      // Not JSON: the text is the result.
      if (text.trim() === "") return setInvalid("Type a result, or decline.");
      onOutput(part, text);
    }
  };
  return (
    <fieldset className="tool-card">
      <legend>
        Tool {name} · {STATES[part.state]}
      </legend>
      <h3>Arguments</h3>
      <pre>{input}</pre>
      {part.state === "approval-requested" && (
        <div className="actions">
          <button type="button" onClick={() => onApproval(part.approval.id, true)}>
            Approve
          </button>
          <button type="button" onClick={() => onApproval(part.approval.id, false)}>
            Decline
          </button>
        </div>
      )}
      {part.state === "input-available" && !part.providerExecuted && (
        <form onSubmit={answer}>
          <label>
            Result
            <textarea name="result" rows={3} />
          </label>
          {invalid && <p role="alert">{invalid}</p>}
          <div className="actions">
            <button type="submit">Send result</button>
            <button type="button" onClick={() => onError(part, "The user declined this call.")}>
              Decline
            </button>
          </div>
        </form>
      )}
      {part.state === "output-available" && (
        <>
          <h3>Result</h3>
          <pre>{pretty(JSON.stringify(part.output))}</pre>
        </>
      )}
      {part.state === "output-error" && <p className="error">{part.errorText}</p>}
    </fieldset>
  );
}
