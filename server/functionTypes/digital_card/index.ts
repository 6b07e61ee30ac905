import { escapeHtml, linkList, renderPage, safeHttpUrl, telHref, type Rendered } from '../../features/scans/pages.ts';
import { defineFunctionType } from '../define.ts';
import type { VcardData } from '../vcard/encode.ts';
import { vcardFile } from '../vcard/index.ts';
import { DigitalCardPayload, type DigitalCardPayloadT } from './schema.ts';

export function renderDigitalCard(p: DigitalCardPayloadT, contactHref: string): Rendered {
  const avatar = safeHttpUrl(p.avatar_url);
  const website = safeHttpUrl(p.website);
  const sub = [p.job_title, p.organization].filter(Boolean).join(' · ');
  return renderPage({
    status: 200,
    title: p.name,
    remoteImages: true,
    body: `<article class="card center">
<div class="band"></div>
${avatar ? `<img class="avatar" src="${escapeHtml(avatar)}" alt="">` : ''}
<h1>${escapeHtml(p.name)}</h1>
${sub ? `<p class="sub">${escapeHtml(sub)}</p>` : ''}
${p.bio ? `<p class="body">${escapeHtml(p.bio)}</p>` : ''}
${p.phone ? `<a class="btn" href="${escapeHtml(telHref(p.phone))}">Call ${escapeHtml(p.phone)}</a>` : ''}
${p.email ? `<a class="btn alt" href="${escapeHtml(`mailto:${p.email}`)}">Email ${escapeHtml(p.email)}</a>` : ''}
${website ? `<a class="btn alt" href="${escapeHtml(website)}" rel="noopener noreferrer">Website</a>` : ''}
${linkList(p.links)}
<a class="btn alt" href="${escapeHtml(contactHref)}" download>Save contact</a>
</article>`,
  });
}

/** The vCard a digital card saves as (its bio as the note). */
export function digitalCardVcard(p: DigitalCardPayloadT): VcardData {
  const out: VcardData = { first_name: p.name };
  for (const k of ['job_title', 'organization', 'email', 'phone', 'website'] as const) if (p[k]) out[k] = p[k];
  if (p.bio) out.note = p.bio;
  return out;
}

export const digitalCard = defineFunctionType({
  schema: DigitalCardPayload,
  respond: (p, links) => ({ kind: 'page', rendered: renderDigitalCard(p, links.contactHref) }),
  contactFile: (p) => vcardFile(digitalCardVcard(p)),
});
