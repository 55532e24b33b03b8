/** Where a streamed round's text goes: deltas as they arrive, and a reset when the text shown so far is dropped. */
export interface TextSink {
  delta(text: string): void;
  /** Drops the text shown since the last reset (a no-op when there is none). */
  reset(): void;
  /** The conversation was compacted before the round's next call (`context.compacted`). */
  compacted?(compaction: CompactedEvent): void;
}

/** What a stream tells of a compaction. */
export interface CompactedEvent {
  tokensBefore: number;
  tokensAfter: number;
  reason: "threshold" | "overflow" | "manual";
}

/**
 * The answer one LLM call would give, streamed as it arrives (AGN-011 §5.4, AGN-027 E: the Reasoner prepends
 * welcome messages). A call made after the turn changed mode opens with the new mode's welcome, streamed before
 * the model's own text; the separator follows only once the model says something, so the deltas add up to
 * exactly `answer(text)`.
 */
export class AnswerText {
  #separatorDue: boolean;

  constructor(
    private readonly sink: TextSink | undefined,
    private readonly welcome: string | undefined,
  ) {
    if (welcome) sink?.delta(welcome);
    this.#separatorDue = Boolean(welcome);
  }

  /** Streams a delta of the model's text. */
  readonly delta = (text: string): void => {
    if (text === "") return;
    if (this.#separatorDue) {
      this.sink?.delta("\n\n");
      this.#separatorDue = false;
    }
    this.sink?.delta(text);
  };

  /** The welcome, then the model's text; no separator left dangling when the model said nothing. */
  answer(text: string): string {
    if (!this.welcome) return text;
    return text === "" ? this.welcome : `${this.welcome}\n\n${text}`;
  }

  /** Whether the streamed text opened with a welcome, and so is more than the model's text. */
  get welcomed(): boolean {
    return Boolean(this.welcome);
  }
}
