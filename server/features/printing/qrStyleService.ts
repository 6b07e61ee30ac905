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
import type { QrStyleRepo, QrStyleRow, StoredQrStyleT } from './qrStyleRepo.ts';

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

function toStyle(row: QrStyleRow): QrStyleT {
  const stored = row.style;
  if (!stored) return { ...BUILT_IN_QR_STYLE };
  const moduleStyle = (MODULE_STYLES as readonly string[]).includes(stored.module_style) ? (stored.module_style as ModuleStyle) : 'square';
  return { fg: stored.fg, bg: stored.bg, module_style: moduleStyle, logo: stored.logo && row.logo !== null, frame_text: stored.frame_text };
}

function logoInfo(row: QrStyleRow): QrLogoInfoT | null {
  const logo = row.logo;
  if (!logo) return null;
  return {
    content_type: 'image/png',
    width: logo.width,
    height: logo.height,
    bytes: Buffer.byteLength(logo.png, 'base64'),
    uploaded_as: logo.uploaded_as === 'image/svg+xml' ? 'image/svg+xml' : 'image/png',
    updated_at: logo.updated_at,
  };
}

/** When the style or the logo last changed (null: neither was ever set). */
function lastChange(row: QrStyleRow): string | null {
  const times = [row.style?.updated_at, row.logo?.updated_at].filter((t): t is string => t !== undefined);
  return times.length === 0 ? null : times.reduce((a, b) => (a > b ? a : b));
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
    return { ...toStyle(row), logo_image: logoInfo(row), updated_at: lastChange(row) };
  }

  async updateDefaults(orgId: string, input: { fg?: string | undefined; bg?: string | undefined; module_style?: ModuleStyle | undefined; logo?: boolean | undefined; frame_text?: string | null | undefined }): Promise<QrStyleDefaultsT> {
    await this.deps.store.transaction(async (tx) => {
      const at = isoAt(this.deps.clock);
      const row = await this.deps.repo.get(tx, orgId);
      const current = toStyle(row);
      const next: StoredQrStyleT = {
        fg: input.fg ?? current.fg,
        bg: input.bg ?? current.bg,
        module_style: input.module_style ?? current.module_style,
        logo: input.logo ?? row.style?.logo ?? false,
        frame_text: input.frame_text === undefined ? current.frame_text : input.frame_text,
        updated_at: at,
      };
      assertReadableColours(next.fg, next.bg);
      if (next.logo && !row.logo) throw noLogo();
      await this.deps.repo.putStyle(tx, orgId, next, at);
    });
    return this.defaults(orgId);
  }

  /** Checks, converts and keeps the organization's logo (422 for a refused file). */
  async uploadLogo(orgId: string, input: { content_type: 'image/png' | 'image/svg+xml'; data_base64: string }): Promise<QrStyleDefaultsT> {
    const logo = normaliseLogo(input.content_type, input.data_base64);
    const at = isoAt(this.deps.clock);
    await this.deps.repo.putLogo(this.deps.store.db, orgId, { png: logo.png.toString('base64'), width: logo.width, height: logo.height, uploaded_as: input.content_type, updated_at: at }, at);
    return this.defaults(orgId);
  }

  /** Removes the logo; codes stop carrying it by default. */
  async deleteLogo(orgId: string): Promise<QrStyleDefaultsT> {
    await this.deps.store.transaction(async (tx) => {
      const row = await this.deps.repo.get(tx, orgId);
      if (!row.logo) throw new NotFoundError('No logo');
      const at = isoAt(this.deps.clock);
      await this.deps.repo.putLogo(tx, orgId, null, at);
      if (row.style?.logo) await this.deps.repo.putStyle(tx, orgId, { ...row.style, logo: false, updated_at: at }, at);
    });
    return this.defaults(orgId);
  }

  /** The logo as stored (a PNG we wrote), or 404. */
  async logoPng(orgId: string): Promise<Buffer> {
    const row = await this.deps.repo.get(this.deps.store.db, orgId);
    if (!row.logo) throw new NotFoundError('No logo');
    return Buffer.from(row.logo.png, 'base64');
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
    if (style.logo && !row.logo) throw noLogo();
    return { style, logoPng: style.logo && row.logo ? Buffer.from(row.logo.png, 'base64') : null };
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
