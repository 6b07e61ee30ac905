import { escapeHtml, renderPage, telHref, type Rendered } from '../../features/scans/pages.ts';
import { defineFunctionType } from '../define.ts';
import { ActionPayload, type ActionPayloadT } from './schema.ts';

export type ActionResult = { redirect: string } | { page: Rendered };

/** Digits only: what wa.me and t.me expect (no +, spaces or punctuation). */
export function phoneDigits(phone: string): string {
  return phone.replace(/\D/g, '');
}

export function renderAction(p: ActionPayloadT): ActionResult {
  const message = p.message ?? '';
  switch (p.action_type) {
    case 'whatsapp':
      return {
        redirect: `https://wa.me/${phoneDigits(p.phone ?? '')}${message ? `?text=${encodeURIComponent(message)}` : ''}`,
      };
    case 'telegram':
      // t.me/+<number> opens a chat with that phone number; Telegram has no pre-filled text there.
      return { redirect: `https://t.me/+${phoneDigits(p.phone ?? '')}` };
    case 'sms': {
      const number = (p.phone ?? '').replace(/[^0-9+]/g, '');
      // `?&body=` is understood by both iOS and Android.
      const href = `sms:${number}${message ? `?&body=${encodeURIComponent(message)}` : ''}`;
      return { page: actionPage('Send a text message', p.phone ?? '', message, href, 'Open Messages') };
    }
    case 'call': {
      return { page: actionPage('Call', p.phone ?? '', '', telHref(p.phone ?? ''), `Call ${p.phone ?? ''}`) };
    }
    case 'email': {
      const href = `mailto:${encodeURIComponent(p.email ?? '').replace(/%40/g, '@')}${message ? `?body=${encodeURIComponent(message)}` : ''}`;
      return { page: actionPage('Send an email', p.email ?? '', message, href, 'Open Mail') };
    }
  }
}

function actionPage(title: string, to: string, message: string, href: string, button: string): Rendered {
  return renderPage({
    status: 200,
    title,
    body: `<article class="card">
<div class="band"></div>
<h1>${escapeHtml(title)}</h1>
<p class="sub">To ${escapeHtml(to)}</p>
${message ? `<p class="body">${escapeHtml(message)}</p>` : ''}
<a class="btn" href="${escapeHtml(href)}">${escapeHtml(button)}</a>
</article>`,
  });
}

export const action = defineFunctionType({
  schema: ActionPayload,
  respond: (p) => {
    const a = renderAction(p);
    return 'redirect' in a ? { kind: 'redirect', location: a.redirect } : { kind: 'page', rendered: a.page };
  },
});
