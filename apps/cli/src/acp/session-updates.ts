import type { AgentContext, SessionUpdate } from "@agentclientprotocol/sdk";

/**
 * The `session/update` notifications of one ACP session, sent in the order they were made: text deltas arrive in
 * synchronous callbacks while tool calls await, and an editor renders updates in arrival order. A notification
 * that cannot be sent (the editor went away) is reported on stderr, never thrown into the turn.
 */
export class SessionUpdates {
  #queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: AgentContext,
    private readonly sessionId: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Queues the update; the promise settles once it (and every update before it) was written. */
  send(update: SessionUpdate): Promise<void> {
    return this.after(async () => update);
  }

  /**
   * Queues work whose update (if any) is sent in its place in the order (a mode read, say): updates queued later
   * wait for it.
   */
  after(work: () => Promise<SessionUpdate | undefined>): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      try {
        const update = await work();
        if (update !== undefined)
          await this.client.notify("session/update", { sessionId: this.sessionId, update });
      } catch (error) {
        this.log(`cannot send a session/update: ${(error as Error).message}`);
      }
    });
    return this.#queue;
  }

  /** Settles once everything queued so far was written. */
  flushed(): Promise<void> {
    return this.#queue;
  }

  /** An `agent_message_chunk` of text. */
  text(text: string): Promise<void> {
    return this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  }
}
