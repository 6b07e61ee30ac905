/**
 * The signed-in organization and its scan domain, shared by Settings, the first-run prompt and
 * the screens that print labels or write tags (GET/PATCH /v1/organization).
 */
import { useEffect } from 'react';
import type { z } from 'zod';
import { create } from 'zustand';
import type { Organization } from '../../server/schemas/organization.ts';
import { api } from './api.ts';

export type OrganizationT = z.infer<typeof Organization>;

interface OrganizationState {
  organization: OrganizationT | undefined;
  error: Error | undefined;
  /** Reads GET /v1/organization; overlapping calls share one request. */
  refresh(): Promise<void>;
  /** After PATCH /v1/organization answered the new organization. */
  set(organization: OrganizationT): void;
}

let inFlight: Promise<void> | null = null;

export const useOrganizationStore = create<OrganizationState>((set) => ({
  organization: undefined,
  error: undefined,
  refresh: () =>
    (inFlight ??= api.organization
      .get()
      .then(
        (organization) => set({ organization, error: undefined }),
        (error: unknown) => set({ error: error instanceof Error ? error : new Error(String(error)) }),
      )
      .finally(() => (inFlight = null))),
  set: (organization) => set({ organization, error: undefined }),
}));

/** The organization (loaded once per tab, then kept current by whoever changes it). */
export function useOrganization(): Pick<OrganizationState, 'organization' | 'error' | 'refresh'> {
  const organization = useOrganizationStore((s) => s.organization);
  const error = useOrganizationStore((s) => s.error);
  const refresh = useOrganizationStore((s) => s.refresh);
  useEffect(() => {
    if (!useOrganizationStore.getState().organization) void refresh();
  }, [refresh]);
  return { organization, error, refresh };
}

/** Whether a print or a tag write may go ahead: always, except on a loopback scan base without the test choice. */
export function scanBaseAllows(organization: OrganizationT | undefined, test: boolean): boolean {
  return organization?.scan_base_reach !== 'loopback' || test;
}
