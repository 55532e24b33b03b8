import type { InvokeResult } from "@aptix/contracts";
import type { TranscriptProgress } from "../ports/turn-store.js";
import type { CompactionRecord } from "../records/compaction-record.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { TranscriptItem } from "../records/transcript-item.js";

/**
 * The writes a round makes while it runs, each under the session's lease. The Reasoner names what it needs
 * here and Persistence's `SessionLease` provides it, so the Reasoner never imports the layer above it
 * (docs/architecture.md, "Layer rule"). Each write answers TURN_INTERRUPTED once the lease is lost.
 */
export interface RoundLease {
  /** Keeps an LLM call's trace and, after a success, the transcript it added; `runsServerTools`: write it now. */
  recordLlmCall(
    call: LlmCallRecord,
    progress?: TranscriptProgress,
    runsServerTools?: boolean,
  ): Promise<InvokeResult<void>>;
  /** The session's transcript items from `from` (default 0) up to `length`, for a replay. */
  loadTranscript(length: number, from?: number): Promise<TranscriptItem[]>;
  /** Keeps a compaction, the call that wrote its summary and the compacted chain (its cursor), in one write. */
  recordCompaction(
    call: LlmCallRecord,
    progress: TranscriptProgress,
    compaction: CompactionRecord,
  ): Promise<InvokeResult<void>>;
  /** Changes the session's mode and adds its history row, in one write. */
  changeMode(entry: ModeHistoryEntry): Promise<InvokeResult<void>>;
}
