/** The Response the benchmarks' lean mocks of the Responses API answer with. */
export const MODEL = "gpt-5.1";

/** A completed Response whose one message holds `text`. */
export function completedResponse(text: string) {
  return {
    id: "resp_bench",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    background: false,
    completed_at: 1_700_000_000,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: MODEL,
    output: [
      {
        id: "msg_bench",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: true,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 12,
    },
    metadata: {},
  };
}
