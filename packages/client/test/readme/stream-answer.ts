import type { AptixClient } from "@aptix/client";

/** Streams a turn's text to `show` as it grows, and returns the turn's answer. */
export async function streamAnswer(
  client: AptixClient,
  sessionId: string,
  instruction: string,
  show: (text: string) => void,
  signal?: AbortSignal,
) {
  let text = "";
  const request = { sessionId, turnId: crypto.randomUUID(), instruction };
  for await (const event of client.stream(request, { signal })) {
    switch (event.type) {
      case "output_text.delta":
        text += event.delta;
        break;
      case "output_text.reset":
        // The text so far was an intermediate step's: what follows replaces it.
        text = "";
        break;
      case "result":
        return event.result;
    }
    show(text);
  }
  throw new Error("unreachable: every stream ends with a result");
}
