import type { Executor, Store } from '../../db/store.ts';
import { type Clock, isoAt } from '../../platform/clock.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import {
  BUILT_IN_QR_STYLE,
  MODULE_STYLES,
  type ModuleStyle,
  type QrLogoInfoT,
  type QrStyleDefaultsT,
  type QrStyleRequest,
  type QrStyleT,
} from '../../schemas/qrStyle.ts';
import { assertReadableColours } from './contrast.ts';
import { normaliseLogo } from './logo.ts';
import { type EcLevel, QUIET_ZONE_MODULES, qrSymbol } from './qr.ts';
import { composeArt } from './qrArt.ts';
import { svgToPng } from './qrArtPng.ts';
import { artSvg } from './qrArtSvg.ts';
import type { QrStyleRepo, QrStyleRow } from './qrStyleRepo.ts';

/** The frame's text when a request asks for a frame and neither it nor the defaults name one. */
export const DEFAULT_FRAME_TEXT = 'Scan me';

export interface QrStyleServiceDeps {
  store: Store;
  clock: Clock;
  repo: QrStyleRepo;
  /** The shipped caption font (path), for the frame's text in PNGs. */
  fontFile: string;
}

/** A style ready to draw: the options in effect and the logo's pixels when it is used. */
export interface ResolvedQrStyle {
  style: QrStyleT;
  logoPng: Buffer | null;
}

export interface QrFileRequest {
  format: 'svg' | 'png';
  size: number;
  ecc: EcLevel;
  margin: number;
}

const noLogo = () => new ValidationError({ logo: 'the organization has no logo: upload one with PUT /v1/organization/qr-style/logo' });

function toStyle(row: QrStyleRow | undefined): QrStyleT {
  if (!row) return BUILT_IN_QR_STYLE;
  const moduleStyle = (MODULE_STYLES as readonly string[]).includes(row.module_style) ? (row.module_style as ModuleStyle) : 'square';
  return { fg: row.fg, bg: row.bg, module_style: moduleStyle, logo: row.logo === 1 && row.logo_png !== null, frame_text: row.frame_text };
}

function logoInfo(row: QrStyleRow | undefined): QrLogoInfoT | null {
  if (!row?.logo_png) return null;
  return {
    content_type: 'image/png',
    width: row.logo_width ?? 0,
    height: row.logo_height ?? 0,
    bytes: Buffer.byteLength(row.logo_png, 'base64'),
    uploaded_as: row.logo_uploaded_as === 'image/svg+xml' ? 'image/svg+xml' : 'image/png',
    updated_at: row.logo_updated_at ?? row.updated_at,
  };
}

/**
 * QR codes on brand: an organization's default style and logo, and the style a request ends up
 * with (its options over the defaults, checked for contrast: 400 when a reader may fail).
 */
export class QrStyleService {
  private readonly deps: QrStyleServiceDeps;

  constructor(deps: QrStyleServiceDeps) {
    this.deps = deps;
  }

  async defaults(orgId: string, db: Executor = this.deps.store.db): Promise<QrStyleDefaultsT> {
    const row = await this.deps.repo.get(db, orgId);
    return { ...toStyle(row), logo_image: logoInfo(row), updated_at: row?.updated_at ?? null };
  }

  private blankRow(orgId: string, at: string): QrStyleRow {
    const s = BUILT_IN_QR_STYLE;
    return { org_id: orgId, fg: s.fg, bg: s.bg, module_style: s.module_style, logo: 0, frame_text: null, logo_png: null, logo_width: null, logo_height: null, logo_uploaded_as: null, logo_updated_at: null, updated_at: at };
  }

  async updateDefaults(orgId: string, input: { fg?: string | undefined; bg?: string | undefined; module_style?: ModuleStyle | undefined; logo?: boolean | undefined; frame_text?: string | null | undefined }): Promise<QrStyleDefaultsT> {
    await this.deps.store.transaction(async (tx) => {
      const at = isoAt(this.deps.clock);
      const row = (await this.deps.repo.get(tx, orgId)) ?? this.blankRow(orgId, at);
      const next: QrStyleRow = {
        ...row,
        fg: input.fg ?? row.fg,
        bg: input.bg ?? row.bg,
        module_style: input.module_style ?? row.module_style,
        logo: input.logo === undefined ? row.logo : input.logo ? 1 : 0,
        frame_text: input.frame_text === undefined ? row.frame_text : input.frame_text,
        updated_at: at,
      };
      assertReadableColours(next.fg, next.bg);
      if (next.logo === 1 && !next.logo_png) throw noLogo();
      await this.deps.repo.put(tx, next);
    });
    return this.defaults(orgId);
  }

  /** Checks, converts and keeps the organization's logo (422 for a refused file). */
  async uploadLogo(orgId: string, input: { content_type: 'image/png' | 'image/svg+xml'; data_base64: string }): Promise<QrStyleDefaultsT> {
    const logo = normaliseLogo(input.content_type, input.data_base64);
    await this.deps.store.transaction(async (tx) => {
      const at = isoAt(this.deps.clock);
      const row = (await this.deps.repo.get(tx, orgId)) ?? this.blankRow(orgId, at);
      await this.deps.repo.put(tx, {
        ...row,
        logo_png: logo.png.toString('base64'),
        logo_width: logo.width,
        logo_height: logo.height,
        logo_uploaded_as: input.content_type,
        logo_updated_at: at,
        updated_at: at,
      });
    });
    return this.defaults(orgId);
  }

  /** Removes the logo; codes stop carrying it by default. */
  async deleteLogo(orgId: string): Promise<QrStyleDefaultsT> {
    await this.deps.store.transaction(async (tx) => {
      const row = await this.deps.repo.get(tx, orgId);
      if (!row?.logo_png) throw new NotFoundError('No logo');
      const at = isoAt(this.deps.clock);
      await this.deps.repo.put(tx, { ...row, logo: 0, logo_png: null, logo_width: null, logo_height: null, logo_uploaded_as: null, logo_updated_at: at, updated_at: at });
    });
    return this.defaults(orgId);
  }

  /** The logo as stored (a PNG we wrote), or 404. */
  async logoPng(orgId: string): Promise<Buffer> {
    const row = await this.deps.repo.get(this.deps.store.db, orgId);
    if (!row?.logo_png) throw new NotFoundError('No logo');
    return Buffer.from(row.logo_png, 'base64');
  }

  /** The request's options over the organization's defaults; 400 for unreadable colours, 422 for a logo the organization lacks. */
  async resolve(orgId: string, request: QrStyleRequest): Promise<ResolvedQrStyle> {
    const row = await this.deps.repo.get(this.deps.store.db, orgId);
    const base = toStyle(row);
    let frameText = request.frame_text ?? base.frame_text;
    if (request.frame === false) frameText = null;
    else if (request.frame === true && frameText === null) frameText = DEFAULT_FRAME_TEXT;
    const style: QrStyleT = {
      fg: request.fg ?? base.fg,
      bg: request.bg ?? base.bg,
      module_style: request.style ?? base.module_style,
      logo: request.logo ?? base.logo,
      frame_text: frameText,
    };
    assertReadableColours(style.fg, style.bg);
    if (style.logo && !row?.logo_png) throw noLogo();
    return { style, logoPng: style.logo && row?.logo_png ? Buffer.from(row.logo_png, 'base64') : null };
  }

  /** `text` as a styled QR code file; a logo raises error correction to H whatever `ecc` says. */
  renderFile(text: string, resolved: ResolvedQrStyle, o: QrFileRequest): { contentType: string; body: Buffer } {
    const { style, logoPng } = resolved;
    const symbol = qrSymbol(text, style.logo ? 'H' : o.ecc);
    // A frame is dark right outside the quiet zone: a narrower one would merge with the code.
    const quietZone = style.frame_text === null ? o.margin : Math.max(o.margin, QUIET_ZONE_MODULES);
    const art = composeArt(symbol, { moduleStyle: style.module_style, logo: style.logo, frameText: style.frame_text, quietZone });
    const svg = artSvg(art, style, logoPng, o.size);
    if (o.format === 'svg') return { contentType: 'image/svg+xml', body: Buffer.from(svg, 'utf8') };
    return { contentType: 'image/png', body: svgToPng(svg, o.size, this.deps.fontFile) };
  }
}
