import type { Request } from 'express';
import { z } from 'zod';
import { openEventStream } from '../../http/eventStream.ts';
import { defineRoute, type RouteContext } from '../../http/route.ts';
import { AppError } from '../../platform/errors.ts';
import {
  NfcStatusSchema,
  RetryBody,
  SerialBody,
  SessionSchema,
  StartSessionBody,
  TagReadingSchema,
  TagWrittenSchema,
  WriteNodeBody,
} from '../../schemas/nfc.ts';
import { NfcError } from './program.ts';
import type { NfcService } from './service.ts';

/** The reader is on this machine: only a console on this machine may drive it. */
export class NotLocalError extends AppError {
  constructor() {
    super(403, 'The NFC API is only available to the console on this machine (loopback connections)');
  }
}

/** A refusal from the reader or the tag, as an API error (409, the message says what to do). */
export class NfcConflictError extends AppError {
  readonly code: string;
  constructor(err: NfcError) {
    super(409, err.message);
    this.code = err.code;
  }
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** Uses the socket's address, never X-Forwarded-For: a proxy cannot make a request local. */
export function isLoopback(req: Request): boolean {
  return LOOPBACK.test(req.socket.remoteAddress ?? '');
}

function local<B, Q, P>(ctx: RouteContext<B, Q, P>): void {
  if (!isLoopback(ctx.req)) throw new NotLocalError();
}

async function nfcCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof NfcError) throw new NfcConflictError(err);
    throw err;
  }
}

const notLocal = { 403: { description: 'Not a loopback connection' } };
const conflicts = { ...notLocal, 409: { description: 'No session, no reader, or the tag was refused (see message)' } };

export function nfcRoutes(nfc: NfcService) {
  return [
    defineRoute({
      method: 'get',
      path: '/nfc/status',
      operationId: 'getNfcStatus',
      summary: 'NFC reader state and the active tag writing session',
      tags: ['NFC (local console)'],
      responses: { 200: { description: 'Reader and session', schema: NfcStatusSchema }, ...notLocal },
      handler: async (ctx) => {
        local(ctx);
        return { data: { reader: nfc.readerStatus(), session: await nfc.session(ctx.auth.orgId) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nfc/events',
      operationId: 'streamNfcEvents',
      summary: 'Server-sent events: reader, tag, tag.read, tag.off, tag.written, tag.refused, session',
      tags: ['NFC (local console)'],
      responses: { 200: { description: 'An event stream', content: { 'text/event-stream': { schema: z.string() } } }, ...notLocal },
      handler: async (ctx) => {
        local(ctx);
        const { res, auth } = ctx;
        // The session is read before the headers go: a failure is still an ordinary error answer.
        const session = await nfc.session(auth.orgId);
        const tag = await nfc.currentTag(auth.orgId);
        const stream = openEventStream(res);
        stream.send('reader', nfc.readerStatus());
        stream.send('session', session);
        if (tag) stream.send('tag.read', tag);
        // What a tag holds is told per organization (its node, or "another URL"): the check mode.
        const sendReading = (read: Promise<unknown>) =>
          void read.then(
            (r) => r && stream.send('tag.read', r),
            () => undefined,
          );
        const unsubscribe = nfc.subscribe((e, orgId) => {
          // Session and write events belong to an organization; reader and tag events to the machine.
          if (orgId !== null && orgId !== auth.orgId) return;
          stream.send(e.type, e.data);
          if (e.type === 'tag') sendReading(nfc.describeCard(auth.orgId, e.data));
          else if (e.type === 'tag.written') sendReading(nfc.currentTag(auth.orgId));
        });
        stream.onClose(unsubscribe);
        return undefined;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nfc/tag',
      operationId: 'getNfcTag',
      summary: 'What the tag on the reader holds: its node, blank, or another URL (null when no tag)',
      tags: ['NFC (local console)'],
      responses: { 200: { description: 'The reading or null', schema: TagReadingSchema.nullable() }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        return { data: await nfc.currentTag(ctx.auth.orgId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nfc/session',
      operationId: 'getNfcSession',
      summary: 'The active tag writing session (null when none)',
      tags: ['NFC (local console)'],
      responses: { 200: { description: 'The session or null', schema: SessionSchema.nullable() }, ...notLocal },
      handler: async (ctx) => {
        local(ctx);
        return { data: await nfc.session(ctx.auth.orgId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nfc/session',
      operationId: 'startNfcSession',
      summary: 'Start (or resume) writing the tags of a ready batch',
      tags: ['NFC (local console)'],
      body: StartSessionBody,
      responses: { 201: { description: 'The session', schema: SessionSchema }, 404: { description: 'Batch not found' }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        return { status: 201, data: await nfc.startSession(ctx.auth.orgId, ctx.body.batch_id, ctx.body) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nfc/session/stop',
      operationId: 'stopNfcSession',
      summary: 'Stop the session (a new one resumes at the first unwritten serial)',
      tags: ['NFC (local console)'],
      responses: { 200: { description: 'The stopped session', schema: SessionSchema }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        return { data: await nfc.stopSession(ctx.auth.orgId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nfc/session/skip',
      operationId: 'skipNfcSerial',
      summary: 'Skip the serial asked for now (asked again at the end)',
      tags: ['NFC (local console)'],
      responses: { 200: { description: 'The session', schema: SessionSchema }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        return { data: await nfc.skip(ctx.auth.orgId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nfc/session/redo',
      operationId: 'redoNfcSerial',
      summary: 'Write a serial again on a new tag (default: the last written)',
      tags: ['NFC (local console)'],
      body: SerialBody,
      responses: { 200: { description: 'The session', schema: SessionSchema }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        return { data: await nfc.redo(ctx.auth.orgId, ctx.body.serial) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nfc/session/lost',
      operationId: 'reportNfcTagLost',
      summary: 'Report the tag of a serial lost (default: the one asked for); the node becomes lost',
      tags: ['NFC (local console)'],
      body: SerialBody,
      responses: { 200: { description: 'The session', schema: SessionSchema }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        return { data: await nfc.reportLost(ctx.auth.orgId, ctx.body.serial) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nfc/session/retry',
      operationId: 'retryNfcWrite',
      summary: 'Write the tag on the reader for the serial asked for (reassign: take it from its node)',
      tags: ['NFC (local console)'],
      body: RetryBody,
      responses: { 200: { description: 'Written and verified', schema: TagWrittenSchema }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        return { data: await nfcCall(() => nfc.retry(ctx.auth.orgId, ctx.body)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nfc/write',
      operationId: 'writeNfcTag',
      summary: "Write one node's tag (the tag on the reader, or the next presented)",
      tags: ['NFC (local console)'],
      body: WriteNodeBody,
      responses: { 200: { description: 'Written and verified', schema: TagWrittenSchema }, 404: { description: 'Node not found' }, ...conflicts },
      handler: async (ctx) => {
        local(ctx);
        const { slug, lock, mirror, protect, reassign, timeout_ms, allow_local_scan_base } = ctx.body;
        return { data: await nfcCall(() => nfc.writeNode(ctx.auth.orgId, slug, { lock, mirror, protect, reassign, timeoutMs: timeout_ms, allowLocalScanBase: allow_local_scan_base })) };
      },
    }),
  ];
}
