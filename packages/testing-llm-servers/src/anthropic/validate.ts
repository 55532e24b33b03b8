/**
 * The checks the real Messages API makes on a `POST /v1/messages` body before the model runs, each answered
 * with its `invalid_request_error` message. Messages quoted from real API answers: the `tool_use` /
 * `tool_result` pairing rules, `Did not find N tool_result block(s)…`, empty content, `Field required` and
 * `Extra inputs are not permitted`; the others follow the same style.
 */

export interface AnthropicValidationOptions {
  /**
   * `role: "system"` messages in `messages`. `reject` (default): 400, as on every model before Claude Opus 4.8
   * ("role 'system' is not supported on this model"); an adapter is expected to use the top-level `system`.
   * `after_user`: accepted right after a `user` message only (the mid-conversation system messages of newer
   * models), then ignored by the other checks.
   */
  systemMessages?: "reject" | "after_user";
  /**
   * Consecutive messages of one role. `reject` (default): 400 `roles must alternate…`, which catches an
   * adapter that does not merge them. `merge`: combined into one turn first, which is what the current API
   * does (its reference: "Consecutive user or assistant turns in your request will be combined").
   */
  sameRoleMessages?: "reject" | "merge";
}

type Json = Record<string, unknown>;

interface Turn {
  /** Index in the request's `messages` (of the first message, when merged). */
  index: number;
  role: "user" | "assistant";
  blocks: Json[];
}

const KNOWN_PARAMETERS = new Set([
  "model",
  "messages",
  "max_tokens",
  "system",
  "metadata",
  "stop_sequences",
  "stream",
  "temperature",
  "top_k",
  "top_p",
  "tools",
  "tool_choice",
  "thinking",
  "service_tier",
  "container",
  "output_config",
  "cache_control",
  "context_management",
  "diagnostics",
  "inference_geo",
  "speed",
  "mcp_servers",
]);

const USER_BLOCKS = new Set(["text", "image", "document", "search_result", "tool_result"]);
const ASSISTANT_BLOCKS = new Set(["text", "thinking", "redacted_thinking", "tool_use", "server_tool_use"]);
const IMAGE_MEDIA_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The message of the first rule `body` breaks, or undefined when the real API would accept it. */
export function validateMessagesRequest(
  body: unknown,
  options: AnthropicValidationOptions = {},
): string | undefined {
  if (!isObject(body)) return "Input should be a valid dictionary";
  for (const key of Object.keys(body)) {
    if (!KNOWN_PARAMETERS.has(key)) return `${key}: Extra inputs are not permitted`;
  }
  if (body.model === undefined) return "model: Field required";
  if (typeof body.model !== "string" || body.model === "") return "model: Input should be a valid string";
  if (body.max_tokens === undefined) return "max_tokens: Field required";
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens)) {
    return "max_tokens: Input should be a valid integer";
  }
  if (body.max_tokens < 0) return "max_tokens: Input should be greater than or equal to 0";
  if (body.stream !== undefined && typeof body.stream !== "boolean") {
    return "stream: Input should be a valid boolean";
  }
  const system = systemError(body.system);
  if (system) return system;
  if (body.messages === undefined) return "messages: Field required";
  if (!Array.isArray(body.messages)) return "messages: Input should be a valid list";
  if (body.messages.length === 0) return "messages: at least one message is required";

  const turns: Turn[] = [];
  for (const [i, message] of body.messages.entries()) {
    const shape = messageError(message, i, body.messages.length, body.messages[i - 1], options);
    if (shape) return shape;
    const { role, content } = message as { role: string; content: unknown };
    if (role === "system") continue;
    const blocks: Json[] =
      typeof content === "string" ? [{ type: "text", text: content }] : (content as Json[]);
    const last = turns.at(-1);
    if (last?.role === role) {
      if (options.sameRoleMessages !== "merge") {
        return `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`;
      }
      last.blocks = [...last.blocks, ...blocks];
    } else {
      turns.push({ index: i, role: role as Turn["role"], blocks });
    }
  }
  if (turns[0]?.role !== "user") return 'messages: first message must use the "user" role';

  for (const [t, turn] of turns.entries()) {
    const error =
      turn.role === "user" ? toolResultError(turn, turns[t - 1]) : toolUseError(turn, turns[t + 1]);
    if (error) return error;
  }
  return toolsError(body.tools, body.tool_choice) ?? cacheControlError(body);
}

/** At most 4 breakpoints; the top-level `cache_control` is one of them. */
const MAX_CACHE_BREAKPOINTS = 4;

/** `cache_control` markers: each an `ephemeral` one with a TTL of 5 minutes or an hour, and no more than 4. */
function cacheControlError(body: Json): string | undefined {
  const markers: Array<{ at: string; cacheControl: unknown }> = [];
  const collect = (at: string, blocks: unknown) => {
    if (!Array.isArray(blocks)) return;
    blocks.forEach((block, index) => {
      if (isObject(block) && block.cache_control !== undefined && block.cache_control !== null) {
        markers.push({ at: `${at}.${index}`, cacheControl: block.cache_control });
      }
    });
  };
  collect("tools", body.tools);
  collect("system", body.system);
  if (Array.isArray(body.messages)) {
    body.messages.forEach((message, index) => {
      collect(`messages.${index}.content`, isObject(message) ? message.content : undefined);
    });
  }
  if (body.cache_control !== undefined && body.cache_control !== null) {
    markers.push({ at: "", cacheControl: body.cache_control });
  }
  for (const { at, cacheControl } of markers) {
    const field = at === "" ? "cache_control" : `${at}.cache_control`;
    if (!isObject(cacheControl) || cacheControl.type !== "ephemeral") {
      return `${field}: Input tag found using 'type' does not match any of the expected tags: 'ephemeral'`;
    }
    if (cacheControl.ttl !== undefined && cacheControl.ttl !== "5m" && cacheControl.ttl !== "1h") {
      return `${field}.ttl: Input should be '5m' or '1h'`;
    }
  }
  if (markers.length > MAX_CACHE_BREAKPOINTS) {
    return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${markers.length}.`;
  }
  return undefined;
}

function systemError(system: unknown): string | undefined {
  if (system === undefined || typeof system === "string") return undefined;
  if (!Array.isArray(system)) return "system: Input should be a valid string or list";
  for (const [j, block] of system.entries()) {
    if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") {
      return `system.${j}: Input should be a valid text block`;
    }
  }
  return undefined;
}

function messageError(
  message: unknown,
  i: number,
  count: number,
  previous: unknown,
  options: AnthropicValidationOptions,
): string | undefined {
  if (!isObject(message)) return `messages.${i}: Input should be a valid dictionary`;
  const { role, content } = message;
  if (role === undefined) return `messages.${i}.role: Field required`;
  if (role !== "user" && role !== "assistant" && role !== "system") {
    return `messages.${i}.role: Input should be 'user', 'assistant' or 'system'`;
  }
  if (content === undefined) return `messages.${i}.content: Field required`;
  if (typeof content !== "string" && !Array.isArray(content)) {
    return `messages.${i}.content: Input should be a valid string or list`;
  }
  if (role === "system") {
    if (options.systemMessages !== "after_user") {
      return `messages.${i}: role 'system' is not supported on this model. Put system instructions in the top-level \`system\` parameter.`;
    }
    if (!isObject(previous) || previous.role !== "user") {
      return `messages.${i}: a \`system\` message must immediately follow a \`user\` message`;
    }
  }
  if (content === "" || (Array.isArray(content) && content.length === 0)) {
    if (role === "assistant" && i === count - 1) return undefined;
    return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
  }
  if (typeof content === "string") return textError(content);
  const allowed = role === "user" ? USER_BLOCKS : role === "assistant" ? ASSISTANT_BLOCKS : new Set(["text"]);
  for (const [j, block] of content.entries()) {
    const error = blockError(block, `messages.${i}.content.${j}`, role, allowed);
    if (error) return error;
  }
  return undefined;
}

function textError(text: string): string | undefined {
  if (text.length === 0) return "messages: text content blocks must be non-empty";
  if (text.trim().length === 0) return "messages: text content blocks must contain non-whitespace text";
  return undefined;
}

function blockError(block: unknown, at: string, role: string, allowed: Set<string>): string | undefined {
  if (!isObject(block)) return `${at}: Input should be a valid dictionary`;
  const type = block.type;
  if (typeof type !== "string" || !(USER_BLOCKS.has(type) || ASSISTANT_BLOCKS.has(type))) {
    return `${at}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags`;
  }
  if (!allowed.has(type)) return `${at}: \`${type}\` blocks are not allowed in \`${role}\` messages`;
  switch (type) {
    case "text":
      return typeof block.text === "string" ? textError(block.text) : `${at}.text.text: Field required`;
    case "image":
      return imageError(block.source, `${at}.image.source`);
    case "document":
      return documentError(block.source, `${at}.document.source`);
    case "tool_use":
      if (typeof block.id !== "string" || block.id === "") return `${at}.tool_use.id: Field required`;
      if (typeof block.name !== "string" || block.name === "") return `${at}.tool_use.name: Field required`;
      return isObject(block.input) ? undefined : `${at}.tool_use.input: Input should be a valid dictionary`;
    case "tool_result":
      if (typeof block.tool_use_id !== "string") return `${at}.tool_result.tool_use_id: Field required`;
      if (block.is_error !== undefined && typeof block.is_error !== "boolean") {
        return `${at}.tool_result.is_error: Input should be a valid boolean`;
      }
      if (block.content !== undefined && typeof block.content !== "string" && !Array.isArray(block.content)) {
        return `${at}.tool_result.content: Input should be a valid string or list`;
      }
      return undefined;
    case "thinking":
      if (typeof block.thinking !== "string") return `${at}.thinking.thinking: Field required`;
      return typeof block.signature === "string" ? undefined : `${at}.thinking.signature: Field required`;
    case "redacted_thinking":
      return typeof block.data === "string" ? undefined : `${at}.redacted_thinking.data: Field required`;
    default:
      return undefined;
  }
}

function imageError(source: unknown, at: string): string | undefined {
  if (!isObject(source)) return `${at}: Field required`;
  if (source.type === "base64") {
    if (typeof source.media_type !== "string" || !IMAGE_MEDIA_TYPES.has(source.media_type)) {
      return `${at}.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
    }
    if (typeof source.data !== "string" || source.data === "") return `${at}.base64.data: Field required`;
    return undefined;
  }
  if (source.type === "url" || source.type === "file") return undefined;
  return `${at}: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`;
}

function documentError(source: unknown, at: string): string | undefined {
  if (!isObject(source)) return `${at}: Field required`;
  if (source.type === "base64") {
    if (source.media_type !== "application/pdf")
      return `${at}.base64.media_type: Input should be 'application/pdf'`;
    if (typeof source.data !== "string" || source.data === "") return `${at}.base64.data: Field required`;
    return undefined;
  }
  if (source.type === "text") {
    return source.media_type === "text/plain"
      ? undefined
      : `${at}.text.media_type: Input should be 'text/plain'`;
  }
  if (source.type === "url" || source.type === "content" || source.type === "file") return undefined;
  return `${at}: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'text', 'content', 'url', 'file'`;
}

function toolUseIds(turn: Turn | undefined): string[] {
  if (turn?.role !== "assistant") return [];
  return turn.blocks.filter((b) => b.type === "tool_use").map((b) => String(b.id));
}

/** Every `tool_result` answers a `tool_use` of the message right before it. */
function toolResultError(turn: Turn, previous: Turn | undefined): string | undefined {
  const ids = new Set(toolUseIds(previous));
  for (const [j, block] of turn.blocks.entries()) {
    if (block.type === "tool_result" && !ids.has(String(block.tool_use_id))) {
      return `messages.${turn.index}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return undefined;
}

/** Every `tool_use` is answered by a `tool_result` of the next message, and those results open that message. */
function toolUseError(turn: Turn, next: Turn | undefined): string | undefined {
  const ids = toolUseIds(turn);
  if (ids.length === 0) return undefined;
  const answered = new Set(
    next?.role === "user"
      ? next.blocks.filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id))
      : [],
  );
  const missing = ids.filter((id) => !answered.has(id));
  if (next === undefined || missing.length > 0) {
    return `messages.${turn.index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  const leading = next.blocks.findIndex((b) => b.type !== "tool_result");
  const leadingResults = leading === -1 ? next.blocks.length : leading;
  if (leadingResults < ids.length) {
    return `messages.${next.index}: Did not find ${ids.length} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`;
  }
  return undefined;
}

function toolsError(tools: unknown, toolChoice: unknown): string | undefined {
  const names = new Set<string>();
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return "tools: Input should be a valid list";
    for (const [k, tool] of tools.entries()) {
      if (!isObject(tool)) return `tools.${k}: Input should be a valid dictionary`;
      // Server tools (`web_search_20250305`, …) carry a versioned `type`; custom tools have none or `custom`.
      if (tool.type !== undefined && tool.type !== null && tool.type !== "custom") continue;
      if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
        return `tools.${k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
      }
      if (names.has(tool.name)) return "tools: Tool names must be unique.";
      names.add(tool.name);
      if (tool.input_schema === undefined) return `tools.${k}.custom.input_schema: Field required`;
      if (!isObject(tool.input_schema) || tool.input_schema.type !== "object") {
        return `tools.${k}.custom.input_schema.type: Input should be 'object'`;
      }
      if (tool.description !== undefined && typeof tool.description !== "string") {
        return `tools.${k}.custom.description: Input should be a valid string`;
      }
    }
  }
  if (toolChoice === undefined) return undefined;
  if (!isObject(toolChoice) || !["auto", "any", "tool", "none"].includes(String(toolChoice.type))) {
    return "tool_choice: Input tag found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'";
  }
  if (toolChoice.type === "none") return undefined;
  if (!Array.isArray(tools) || tools.length === 0) {
    return "tool_choice: tool_choice may only be specified while providing tools.";
  }
  if (toolChoice.type === "tool") {
    if (typeof toolChoice.name !== "string") return "tool_choice.tool.name: Field required";
    if (!names.has(toolChoice.name)) return `tool_choice.name: Tool '${toolChoice.name}' not found in tools.`;
  }
  return undefined;
}
