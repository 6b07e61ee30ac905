import { escapeHtml, linkList, renderPage, safeHttpUrl, type Rendered } from '../../features/scans/pages.ts';
import { defineFunctionType } from '../define.ts';
import { MicrositePayload, type MicrositePayloadT } from './schema.ts';

export function renderMicrosite(p: MicrositePayloadT): Rendered {
  const image = safeHttpUrl(p.image_url);
  return renderPage({
    status: 200,
    title: p.title,
    accent: p.theme_color,
    remoteImages: true,
    body: `<article class="card">
<div class="band"></div>
${image ? `<img class="hero" src="${escapeHtml(image)}" alt="">` : ''}
<h1>${escapeHtml(p.title)}</h1>
${p.body ? `<p class="body">${escapeHtml(p.body)}</p>` : ''}
${linkList(p.links)}
</article>`,
  });
}

export const microsite = defineFunctionType({
  schema: MicrositePayload,
  respond: (p) => ({ kind: 'page', rendered: renderMicrosite(p) }),
});
