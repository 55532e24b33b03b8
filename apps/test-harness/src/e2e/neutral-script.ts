/**
 * One provider-neutral description of what the "model" answers, scripted on either harness: the same
 * scenario runs against the OpenAI Responses API and the Anthropic Messages API with identical call ids,
 * texts (and stream chunks) and token counts, so the service's answers can be compared across providers.
 */
import type {
  AnthropicRecordedRequest,
  AnthropicScriptStep,
  RecordedRequest,
  ScriptedAnthropic,
  ScriptedOpenAI,
  ScriptStep,
} from "@aptix/testing-llm-servers";
import { anthropicStep, step } from "@aptix/testing-llm-servers";

export type ProviderId = "openai" | "anthropic";

/** A tool call the model makes, with the id the client will see. */
interface NeutralToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** One answer of the model (one provider request). */
export interface NeutralModelTurn {
  /** The assistant text as the stream's chunks (joined when not streaming). */
  text?: string[];
  /** After the text. */
  toolCalls?: NeutralToolCall[];
  /** Token counts both providers report (no cache or reasoning tokens: they report 0 of those). */
  usage: { input: number; output: number };
  /** Streaming: pause before each text chunk but the first. */
  chunkDelayMs?: number;
  /** Wait before answering at all. */
  delayMs?: number;
  /**
   * Streaming: the answer breaks after this many text chunks (OpenAI: the connection drops; Anthropic: an
   * `event: error` of type `overloaded_error`, as the API sends mid-answer).
   */
  breakAfterChunks?: number;
}

/** The events the OpenAI harness writes before a message's first `response.output_text.delta`. */
const OPENAI_EVENTS_BEFORE_TEXT = 4; // created, in_progress, output_item.added, content_part.added
/** The events the Anthropic harness writes before the first `text_delta`. */
const ANTHROPIC_EVENTS_BEFORE_TEXT = 3; // message_start, ping, content_block_start

/** The turn as an OpenAI Responses API step. */
function openaiStepOf(turn: NeutralModelTurn): ScriptStep {
  return step.reply({
    ...(turn.text !== undefined ? { text: turn.text } : {}),
    ...(turn.toolCalls !== undefined
      ? {
          functionCalls: turn.toolCalls.map((call) => ({
            name: call.name,
            arguments: call.input,
            callId: call.id,
          })),
        }
      : {}),
    usage: { input_tokens: turn.usage.input, output_tokens: turn.usage.output },
    ...(turn.chunkDelayMs !== undefined ? { chunkDelayMs: turn.chunkDelayMs } : {}),
    ...(turn.delayMs !== undefined ? { delayMs: turn.delayMs } : {}),
    ...(turn.breakAfterChunks !== undefined
      ? { dropAfterEvents: OPENAI_EVENTS_BEFORE_TEXT + turn.breakAfterChunks }
      : {}),
  });
}

/** The turn as an Anthropic Messages API step. */
function anthropicStepOf(turn: NeutralModelTurn): AnthropicScriptStep {
  return anthropicStep.reply({
    ...(turn.text !== undefined ? { text: turn.text } : {}),
    ...(turn.toolCalls !== undefined
      ? { toolUses: turn.toolCalls.map((call) => ({ name: call.name, input: call.input, id: call.id })) }
      : {}),
    usage: {
      input_tokens: turn.usage.input,
      output_tokens: turn.usage.output,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: { thinking_tokens: 0 },
    },
    ...(turn.chunkDelayMs !== undefined ? { chunkDelayMs: turn.chunkDelayMs } : {}),
    ...(turn.delayMs !== undefined ? { delayMs: turn.delayMs } : {}),
    ...(turn.breakAfterChunks !== undefined
      ? { streamError: { afterEvents: ANTHROPIC_EVENTS_BEFORE_TEXT + turn.breakAfterChunks } }
      : {}),
  });
}

/** One provider's harness behind the neutral script. */
export interface ProviderRig {
  provider: ProviderId;
  /** Appends the model's answers to the harness's script. */
  enqueue(...turns: NeutralModelTurn[]): void;
  /** How many model requests the harness has received. */
  requestCount(): number;
  /** The raw bodies of the model requests, in order. */
  rawBodies(): string[];
  /** How many text chunks the harness has written so far in answer to its `index`-th model request. */
  textChunksWritten(index: number): number;
  /** Whether the harness has finished writing its `index`-th answer (the stream's last event is out). */
  answerFinished(index: number): boolean;
  /** Throws if a request broke the provider's request rules or a scripted step was left; then resets. */
  checkAndReset(): void;
}

export function openaiRig(harness: ScriptedOpenAI): ProviderRig {
  const requests = (): RecordedRequest[] => harness.responseRequests();
  return {
    provider: "openai",
    enqueue: (...turns) => void harness.enqueue(...turns.map(openaiStepOf)),
    requestCount: () => requests().length,
    rawBodies: () => requests().map((request) => request.rawBody),
    textChunksWritten: (index) =>
      (requests()[index]?.events ?? []).filter((event) => event.type === "response.output_text.delta").length,
    answerFinished: (index) =>
      (requests()[index]?.events ?? []).some((event) => event.type === "response.completed"),
    checkAndReset() {
      const invalid = requests()
        .filter((request) => request.schemaErrors !== undefined)
        .map((request) => `#${request.index}: ${JSON.stringify(request.schemaErrors)}`);
      const pending = harness.pendingSteps();
      harness.reset();
      if (invalid.length > 0)
        throw new Error(`requests failed the CreateResponse schema:\n${invalid.join("\n")}`);
      if (pending > 0) throw new Error(`${pending} scripted OpenAI step(s) were left over`);
    },
  };
}

export function anthropicRig(harness: ScriptedAnthropic): ProviderRig {
  const requests = (): AnthropicRecordedRequest[] => harness.messageRequests();
  return {
    provider: "anthropic",
    enqueue: (...turns) => void harness.enqueue(...turns.map(anthropicStepOf)),
    requestCount: () => requests().length,
    rawBodies: () => requests().map((request) => request.rawBody),
    textChunksWritten: (index) =>
      (requests()[index]?.events ?? []).filter(
        (event) => event.type === "content_block_delta" && event.delta.type === "text_delta",
      ).length,
    answerFinished: (index) =>
      (requests()[index]?.events ?? []).some((event) => event.type === "message_stop"),
    checkAndReset() {
      const invalid = requests()
        .filter((request) => request.validationError !== undefined)
        .map((request) => `#${request.index}: ${request.validationError}`);
      const pending = harness.pendingSteps();
      harness.reset();
      if (invalid.length > 0)
        throw new Error(`requests broke the Messages API's rules:\n${invalid.join("\n")}`);
      if (pending > 0) throw new Error(`${pending} scripted Anthropic step(s) were left over`);
    },
  };
}
