import type { InvokeFailure } from "@aptix/contracts";
import { rateLimited } from "../rate-limited.js";
import { MAX_FOLLOWERS_PER_PRINCIPAL, MAX_FOLLOWERS_PER_TURN } from "./follower-slots.js";

/** When a follower refused for a full turn may try again: slots free as other followers leave, at no set time. */
const FOLLOWER_RETRY_MS = 5_000;

/** The refusal of a follower (the events route's, a chat's resume) past the bound `full` names. */
export function followersFull(full: "turn" | "principal"): InvokeFailure {
  const limit =
    full === "turn"
      ? `This turn already has ${MAX_FOLLOWERS_PER_TURN} followers`
      : `This principal already has ${MAX_FOLLOWERS_PER_PRINCIPAL} followers on this instance`;
  return rateLimited(limit, FOLLOWER_RETRY_MS);
}
