import type { PruneTracesInput, TranscriptStore } from "../ports/transcript-store.js";
import type { CompactionRecord } from "../records/compaction-record.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { SessionKey } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import { copy, type InMemorySessions } from "./in-memory-sessions.js";

/** A `TranscriptStore` in process memory (see `inMemorySessionStores`). */
export class InMemoryTranscriptStore implements TranscriptStore {
  readonly #shared: InMemorySessions;

  constructor(shared: InMemorySessions) {
    this.#shared = shared;
  }

  async listCompactions(key: SessionKey): Promise<CompactionRecord[]> {
    return (this.#shared.state(key)?.compactions ?? []).map(copy);
  }

  async loadTranscript(key: SessionKey, length: number, from = 0): Promise<TranscriptItem[]> {
    const state = this.#shared.state(key);
    if (state === undefined) return [];
    return [...state.transcript.entries()]
      .filter(([position]) => position >= from && position < length)
      .sort(([a], [b]) => a - b)
      .map(([, item]) => copy(item));
  }

  async listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]> {
    const calls = this.#shared.state(key)?.calls.get(turnId) ?? [];
    return [...calls].sort((a, b) => a.index - b.index).map(copy);
  }

  async pruneTraces({ startedBefore, limit }: PruneTracesInput): Promise<number> {
    let pruned = 0;
    for (const { calls } of this.#shared.sessions.values()) {
      for (const call of [...calls.values()].flat()) {
        if (pruned >= limit) return pruned;
        if (call.request === null || call.startedAt.getTime() >= startedBefore.getTime()) continue;
        Object.assign(call, { request: null, providerRequest: null, providerResponse: null });
        pruned++;
      }
    }
    return pruned;
  }
}
