import { escapeHtml, renderPage, row, safeHttpUrl, telHref, type Rendered } from '../../features/scans/pages.ts';
import { defineFunctionType } from '../define.ts';
import { buildVcard, vcardFileName, type VcardData } from './encode.ts';
import { VcardPayload, type VcardPayloadT } from './schema.ts';

export function renderVcardPage(p: VcardPayloadT, contactHref: string): Rendered {
  const name = [p.first_name, p.last_name].filter(Boolean).join(' ');
  const sub = [p.job_title, p.organization].filter(Boolean).join(' · ');
  const website = safeHttpUrl(p.website);
  return renderPage({
    status: 200,
    title: name,
    body: `<article class="card">
<div class="band"></div>
<h1>${escapeHtml(name)}</h1>
${sub ? `<p class="sub">${escapeHtml(sub)}</p>` : ''}
<dl>${row('Phone', p.phone, p.phone ? telHref(p.phone) : null)}${row('Email', p.email, p.email ? `mailto:${p.email}` : null)}${row('Website', p.website, website)}</dl>
<a class="btn" href="${escapeHtml(contactHref)}" download>Save contact</a>
</article>`,
  });
}

/** The contact as a .vcf download (what "Save contact" fetches; a digital card's too). */
export function vcardFile(p: VcardData): Rendered {
  const name = vcardFileName(p);
  return {
    status: 200,
    headers: {
      'content-type': 'text/vcard; charset=utf-8',
      'content-disposition': `attachment; filename="${name.ascii}"; filename*=UTF-8''${encodeURIComponent(name.utf8)}`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    body: buildVcard(p),
  };
}

export const vcard = defineFunctionType({
  schema: VcardPayload,
  respond: (p, links) => ({ kind: 'page', rendered: renderVcardPage(p, links.contactHref) }),
  contactFile: vcardFile,
});
