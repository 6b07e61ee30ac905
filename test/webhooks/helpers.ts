import { type ApiResponse, type TestServer, apiRequest } from '../support/server.ts';

/** An enterprise key with budgets large enough that tests never meet the rate limiter. */
export async function unlimitedApi(server: TestServer): Promise<(method: string, path: string, body?: unknown) => Promise<ApiResponse>> {
  const { apiKey } = await server.running.app.services.keys.createKey(server.orgId, 'webhook tests', 'enterprise', {
    standard_per_minute: 1_000_000,
    batch_per_minute: 1_000_000,
    burst_per_second: 1_000_000,
  });
  return (method, path, body) => apiRequest(server.url, method, path, body, apiKey);
}

/**
 * Fans out until every recorded event is settled. On PostgreSQL a fan-out leaves events that a
 * transaction still running anywhere on the server may precede (WebhookService.settledOutboxSeq);
 * the dispatcher looks again shortly, a test calling fanOut itself does the same.
 */
export async function fanOutSettled(service: { fanOut(): Promise<number>; fanOutBehind(): boolean }): Promise<number> {
  let fanned = await service.fanOut();
  while (service.fanOutBehind()) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    fanned += await service.fanOut();
  }
  return fanned;
}
