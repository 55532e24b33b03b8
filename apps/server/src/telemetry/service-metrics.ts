import { PriceList, type TurnObserver } from "@aptix/core";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { roundOutcome, toolRunOutcome } from "./outcomes.js";

export interface ServiceMetricsOptions {
  /** Database connections busy now, read at each scrape. */
  dbPoolInUse: () => number;
  /** What prices `aptix_cost_usd_total`; the built-in table alone when absent. */
  prices?: PriceList;
}

/**
 * The service's Prometheus metrics (docs/operations.md, Metrics), in a registry of its own rather than
 * prom-client's global one, so services started side by side in one process (tests) count apart. Turns, LLM
 * calls and tools are counted by `observer`, from the same hooks the traces use; refusals by `countRateLimited`.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly observer: TurnObserver;
  readonly #rateLimited: Counter;
  readonly #requestSeconds: Histogram;
  readonly #webhookDeliveries: Counter;

  constructor(options: ServiceMetricsOptions) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.observer = metricsObserver(turnInstruments(registers), options.prices ?? new PriceList());
    // OpenTelemetry's HTTP server metric, its name and labels as Prometheus writes them, its advised buckets.
    this.#requestSeconds = new Histogram({
      name: "http_server_request_duration_seconds",
      help: "How long the service took to answer an HTTP request (a streamed one: until its stream opened).",
      labelNames: ["http_request_method", "http_route", "http_response_status_code"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
      registers,
    });
    this.#rateLimited = new Counter({
      name: "aptix_rate_limited_total",
      help: "Requests refused with 429 RATE_LIMITED (request rate, running turns or failed authentications).",
      registers,
    });
    this.#webhookDeliveries = new Counter({
      name: "aptix_webhook_deliveries_total",
      help: "Attempts to deliver a webhook event, by outcome: delivered, retried (failed, tried again later) or dropped (failed its last attempt).",
      labelNames: ["outcome"],
      registers,
    });
    new Gauge({
      name: "aptix_db_pool_in_use",
      help: "Database connections of the store's pool busy with a statement or transaction now.",
      registers,
      collect() {
        this.set(options.dbPoolInUse());
      },
    });
  }

  /** One more HTTP request answered, by its method, the route that answered it (its template) and status. */
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void {
    this.#requestSeconds.observe(
      {
        http_request_method: labels.method,
        http_route: labels.route,
        http_response_status_code: labels.status,
      },
      seconds,
    );
  }

  /** One more attempt to deliver a webhook event, by what came of it. */
  countWebhookDelivery(outcome: "delivered" | "retried" | "dropped"): void {
    this.#webhookDeliveries.inc({ outcome });
  }

  /** One more request refused with 429 RATE_LIMITED. */
  countRateLimited(): void {
    this.#rateLimited.inc();
  }
}

/** The instruments of turns, LLM calls, tools and compactions, which `metricsObserver` feeds. */
function turnInstruments(registers: Registry[]) {
  const turns = new Counter({
    name: "aptix_turns_total",
    help: "Rounds of turns run, by how they ended: completed, awaiting_client_tools, cancelled or failed.",
    labelNames: ["outcome"],
    registers,
  });
  const turnSeconds = new Histogram({
    name: "aptix_turn_duration_seconds",
    help: "How long a round of a turn ran on this instance (client tools run between rounds, not in them).",
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers,
  });
  const running = new Gauge({
    name: "aptix_running_turns",
    help: "Rounds of turns running on this instance now.",
    registers,
  });
  const llmSeconds = new Histogram({
    name: "aptix_llm_call_duration_seconds",
    help: "How long one LLM call took, failed ones included.",
    labelNames: ["provider", "model"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const tokens = new Counter({
    name: "aptix_tokens_total",
    help:
      "Tokens of LLM calls as their providers counted them, by direction: input, cached_input (the part of " +
      "input read from the provider's prompt cache) or output.",
    labelNames: ["provider", "direction"],
    registers,
  });
  const cost = new Counter({
    name: "aptix_cost_usd_total",
    help: "USD of LLM calls by the price table; calls of a model it does not price are not counted.",
    labelNames: ["provider", "model"],
    registers,
  });
  const toolCalls = new Counter({
    name: "aptix_tool_calls_total",
    help: "Server tool runs, by tool and outcome: ok, error (the tool's own, sent to the model) or failed.",
    labelNames: ["tool", "outcome"],
    registers,
  });
  const compactions = new Counter({
    name: "aptix_compactions_total",
    help: "Conversations compacted, by why: threshold (near the window), overflow (the provider refused) or manual.",
    labelNames: ["reason"],
    registers,
  });
  return { turns, turnSeconds, running, llmSeconds, tokens, cost, toolCalls, compactions };
}

/** Counts and times each round, LLM call, tool run and compaction core runs, through its observer hooks. */
function metricsObserver(instruments: ReturnType<typeof turnInstruments>, prices: PriceList): TurnObserver {
  const { turns, turnSeconds, running, llmSeconds, tokens, cost, toolCalls, compactions } = instruments;
  const seconds = (started: number) => (performance.now() - started) / 1000;
  return {
    async round(_round, run) {
      const started = performance.now();
      running.inc();
      try {
        const result = await run();
        turns.inc({ outcome: roundOutcome(result) });
        return result;
      } catch (error) {
        turns.inc({ outcome: "failed" });
        throw error;
      } finally {
        running.dec();
        turnSeconds.observe(seconds(started));
      }
    },
    async llmCall(call, run) {
      const started = performance.now();
      try {
        const result = await run();
        if (result.successful) {
          const { usage } = result.result;
          tokens.inc({ provider: call.provider, direction: "input" }, usage.inputTokens);
          tokens.inc({ provider: call.provider, direction: "cached_input" }, usage.cachedInputTokens ?? 0);
          tokens.inc({ provider: call.provider, direction: "output" }, usage.outputTokens);
          const nanos = prices.costNanos({
            model: call.model,
            inputTokens: usage.inputTokens,
            cachedInputTokens: usage.cachedInputTokens ?? 0,
            outputTokens: usage.outputTokens,
          });
          if (nanos !== undefined) cost.inc({ provider: call.provider, model: call.model }, nanos / 1e9);
        }
        return result;
      } finally {
        llmSeconds.observe({ provider: call.provider, model: call.model }, seconds(started));
      }
    },
    async toolRun(tool, run) {
      try {
        const result = await run();
        toolCalls.inc({ tool: tool.name, outcome: toolRunOutcome(result) });
        return result;
      } catch (error) {
        toolCalls.inc({ tool: tool.name, outcome: "failed" });
        throw error;
      }
    },
    retrieval: (_query, run) => run(),
    async compaction(compaction, run) {
      const result = await run();
      if (result.successful && result.result !== undefined) compactions.inc({ reason: compaction.reason });
      return result;
    },
  };
}
