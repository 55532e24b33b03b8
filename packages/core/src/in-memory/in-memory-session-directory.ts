import type { ToolContinuationRequest, UserTurnRequest } from "@aptix/contracts";
import type {
  DeleteSessionInput,
  DeleteSessionResult,
  FindIdleSessionsInput,
  FinishResponseDeletionsInput,
  ForkSessionInput,
  ForkSessionResult,
  ListSessionsInput,
  MessageTurn,
  ResponseDeletion,
  SessionDirectory,
  SessionListing,
  TakeResponseDeletionsInput,
} from "../ports/session-directory.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import { sessionTitle } from "../records/session-title.js";
import type { TurnRecord } from "../records/turn-record.js";
import { copy, type InMemorySessions, type SessionState } from "./in-memory-sessions.js";

/** A `SessionDirectory` in process memory (see `inMemorySessionStores`). */
export class InMemorySessionDirectory implements SessionDirectory {
  readonly #shared: InMemorySessions;

  constructor(shared: InMemorySessions) {
    this.#shared = shared;
  }

  async getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    const state = this.#shared.state(key);
    return state === undefined ? undefined : copy(state.record);
  }

  async listTurns(key: SessionKey): Promise<TurnRecord[]> {
    const state = this.#shared.state(key);
    if (state === undefined) return [];
    return [...state.turns.values()].sort((a, b) => a.sequence - b.sequence).map(copy);
  }

  async listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return (this.#shared.state(key)?.modeHistory ?? []).map(copy);
  }

  async listSessions({
    principal,
    limit,
    workspaceId,
    titleContains,
    after,
  }: ListSessionsInput): Promise<SessionListing[]> {
    const needle = titleContains?.toLowerCase();
    const listings = [...this.#shared.sessions.values()]
      .filter(({ record }) => record.principal === principal)
      .map(listingOf)
      .filter((listing) => workspaceId === undefined || listing.workspaceId === workspaceId)
      .filter(
        (listing) =>
          needle === undefined || sessionTitle(listing.firstInstruction).toLowerCase().includes(needle),
      )
      .sort(newestFirst);
    const from = after === undefined ? 0 : listings.findIndex((listing) => newestFirst(after, listing) < 0);
    return (from < 0 ? [] : listings.slice(from, from + limit)).map(copy);
  }

  async listMessageTurns(key: SessionKey, fromSequence: number, limit: number): Promise<MessageTurn[]> {
    const turns = (await this.listTurns(key)).filter((turn) => turn.sequence >= fromSequence).slice(0, limit);
    return Promise.all(
      turns.map(async (turn) => {
        const [first, ...continuations] = turn.rounds;
        const instruction = (first?.request as UserTurnRequest | undefined)?.instruction;
        const answer = turn.rounds.at(-1)?.result;
        const calls = [...(this.#shared.state(key)?.calls.get(turn.turnId) ?? [])].sort(
          (a, b) => a.index - b.index,
        );
        return {
          turnId: turn.turnId,
          status: turn.status,
          error: turn.error,
          createdAt: turn.createdAt,
          updatedAt: turn.updatedAt,
          completedAt: turn.completedAt,
          ...(instruction === undefined ? {} : { instruction }),
          toolCalls: calls.flatMap((call) => call.response?.toolCalls ?? []),
          toolOutcomes: [
            ...turn.toolExecutions,
            ...continuations.flatMap((round) => (round.request as ToolContinuationRequest).toolResults),
          ].map(({ toolCallId, resultJson, errorMessage }) => ({
            toolCallId,
            ...(resultJson === undefined ? {} : { resultJson }),
            ...(errorMessage === undefined ? {} : { errorMessage }),
          })),
          ...(answer === undefined ? {} : { answer }),
        };
      }),
    );
  }

  async forkSession(input: ForkSessionInput): Promise<ForkSessionResult> {
    const source = this.#shared.state(input.source);
    const key = { principal: input.source.principal, sessionId: input.sessionId };
    if (source?.record.version !== input.expectVersion || this.#shared.state(key)) return "stale";
    const { conversationContextId, agentContextId, solutionContextText } = source.record;
    const fork = this.#shared.create(
      key,
      { conversationContextId, agentContextId, mode: input.mode },
      input.now,
    );
    const turns = [...source.turns.values()].filter((turn) => turn.sequence < input.beforeSequence);
    for (const turn of turns) fork.turns.set(turn.turnId, { ...copy(turn), sessionId: input.sessionId });
    const copiedTurnIds = new Set(turns.map((turn) => turn.turnId));
    fork.compactions = source.compactions
      .filter((compaction) => copiedTurnIds.has(compaction.turnId))
      .map((compaction) => ({ ...copy(compaction), sessionId: input.sessionId }));
    fork.modeHistory = source.modeHistory
      .filter((change) => copiedTurnIds.has(change.turnId))
      .map((change) => ({ ...copy(change), sessionId: input.sessionId }));
    this.#shared.shareFiles(input.source, input.sessionId, copiedTurnIds);
    for (const [position, item] of source.transcript)
      if (position < input.cursor.transcriptLength) fork.transcript.set(position, copy(item));
    Object.assign(fork.record, {
      solutionContextText,
      cursor: copy(input.cursor),
      turnCount: turns.length,
      forkedFrom: copy(input.forkedFrom),
    });
    return "forked";
  }

  async deleteSession({
    key,
    expectVersion,
    responsesStoredBy,
  }: DeleteSessionInput): Promise<DeleteSessionResult> {
    const state = this.#shared.state(key);
    if (state === undefined || state.record.version !== expectVersion) return "stale";
    if (this.#shared.busy(state)) return "busy";
    if (responsesStoredBy !== undefined) {
      for (const call of [...state.calls.values()].flat()) {
        const responseId = call.response?.responseId;
        if (responseId === undefined || responseId === null) continue;
        const deletion = { provider: responsesStoredBy, responseId, attempts: 0 };
        this.#shared.responseDeletions.set(nameOfDeletion(deletion), { ...deletion, dueAt: new Date(0) });
      }
    }
    this.#shared.releaseFiles(key);
    this.#shared.delete(key);
    return "deleted";
  }

  async takeResponseDeletions({
    limit,
    dueBy,
    retryAt,
  }: TakeResponseDeletionsInput): Promise<ResponseDeletion[]> {
    const due = [...this.#shared.responseDeletions.values()]
      .filter((deletion) => deletion.dueAt.getTime() <= dueBy.getTime())
      .slice(0, Math.max(0, Math.ceil(limit)));
    for (const deletion of due) deletion.dueAt = new Date(retryAt);
    return due.map(({ provider, responseId, attempts }) => ({ provider, responseId, attempts }));
  }

  async finishResponseDeletions({ done, failed }: FinishResponseDeletionsInput): Promise<void> {
    for (const deletion of done) this.#shared.responseDeletions.delete(nameOfDeletion(deletion));
    for (const { retryAt, ...deletion } of failed) {
      const kept = this.#shared.responseDeletions.get(nameOfDeletion(deletion));
      if (kept === undefined) continue;
      kept.attempts += 1;
      kept.dueAt = new Date(retryAt);
    }
  }

  async findIdleSessions({ idleBefore, limit }: FindIdleSessionsInput): Promise<SessionKey[]> {
    return [...this.#shared.sessions.values()]
      .filter(({ record }) => record.updatedAt.getTime() < idleBefore.getTime())
      .slice(0, Math.max(0, Math.ceil(limit)))
      .map(({ record }) => ({ principal: record.principal, sessionId: record.sessionId }));
  }
}

/** What the list shows of a session's turns. */
function listingOf({ record, turns }: SessionState): SessionListing {
  const ordered = [...turns.values()].sort((a, b) => a.sequence - b.sequence);
  // A turn's first round is its user turn.
  const requests = ordered.map((turn) => turn.rounds[0]?.request as UserTurnRequest | undefined);
  const { sessionId, mode, turnCount, createdAt, updatedAt } = record;
  const listing: SessionListing = { sessionId, mode, turnCount, createdAt, updatedAt };
  const last = ordered.at(-1);
  if (last !== undefined) listing.lastTurnStatus = last.status;
  const instruction = requests.find((request) => request?.instruction !== undefined)?.instruction;
  if (instruction !== undefined) listing.firstInstruction = instruction;
  const workspaceId = requests.findLast((request) => request?.workspaceId !== undefined)?.workspaceId;
  if (workspaceId !== undefined) listing.workspaceId = workspaceId;
  return listing;
}

/** Most recently active first: `updatedAt`, then `sessionId`, descending. */
function newestFirst(
  a: { updatedAt: Date; sessionId: string },
  b: { updatedAt: Date; sessionId: string },
): number {
  const byTime = b.updatedAt.getTime() - a.updatedAt.getTime();
  if (byTime !== 0) return byTime;
  return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
}

function nameOfDeletion({ provider, responseId }: Pick<ResponseDeletion, "provider" | "responseId">): string {
  return JSON.stringify([provider, responseId]);
}
