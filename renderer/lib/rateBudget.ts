/**
 * The API key's rate budget as the server last reported it (X-RateLimit-* on every answer).
 * Background refreshes (a batch's progress) skip their turn while little of the minute's budget
 * is left, so that the console's own polling never spends what the operator's clicks need: a
 * developer key allows 100 requests a minute, shared by every tab signed in with it.
 */

export interface RateBudget {
  limit: number;
  remaining: number;
  /** When the window resets (ms since the epoch). */
  resetAt: number;
}

/** What background work leaves to the operator: a quarter of the minute's budget, at least 10. */
export function reserveOf(limit: number): number {
  return Math.max(10, Math.ceil(limit / 4));
}

export function readBudget(headers: Headers): RateBudget | null {
  const limit = Number(headers.get('x-ratelimit-limit'));
  const remaining = Number(headers.get('x-ratelimit-remaining'));
  const reset = Number(headers.get('x-ratelimit-reset'));
  if (!headers.has('x-ratelimit-remaining') || !Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(reset)) return null;
  return { limit, remaining, resetAt: reset * 1000 };
}

let last: RateBudget | null = null;

/** Records the budget an answer reported (api.ts calls it for every response). */
export function noteBudget(headers: Headers): void {
  const b = readBudget(headers);
  if (b) last = b;
}

/** May a background refresh go now? Yes unless the current window has only the reserve left. */
export function backgroundAllowed(now = Date.now(), budget: RateBudget | null = last): boolean {
  if (!budget || now >= budget.resetAt) return true;
  return budget.remaining > reserveOf(budget.limit);
}
