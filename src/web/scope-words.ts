import { isScope, RISK_WORDS, SCOPES } from '../domain/access/scopes.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * A scope as a person reads it: what it allows in words and its risk first, the identifier last and
 * small (an agent's developer may need it; the member should not have to).
 */
export function scopeItem(scope: string): SafeHtml {
  if (!isScope(scope)) return html`<li><strong>Unknown permission</strong> <code>${scope}</code></li>`;
  const { description, risk } = SCOPES[scope];
  return html`<li><strong>${description}</strong> <span class="badge risk-${risk}">${RISK_WORDS[risk]}</span> <code>${scope}</code></li>`;
}

/** A list of scopes in words, under an id the tests and the page's headings refer to. */
export function scopeList(id: string, scopes: readonly string[]): SafeHtml {
  return html`<ul class="scopes" id="${id}">${scopes.map(scopeItem)}</ul>`;
}

/**
 * The approval and consent pages' card of what an agent will be able to do: the scopes the member's
 * tier grants, then those it asked for that the tier will not grant.
 */
export function grantCard(granted: readonly string[], denied: readonly string[], tier: string): SafeHtml {
  return html`<section class="card" aria-labelledby="may"><h2 id="may">What it will be able to do</h2>
${granted.length ? scopeList('granted', granted) : html`<p id="granted">Nothing: your tier grants none of what it asks for.</p>`}
${
  denied.length
    ? html`<h3>What your tier (${tier}) will not grant it</h3><p class="muted">It asked for these too; it will not get them.</p>${scopeList('denied', denied)}`
    : ''
}</section>`;
}

/** A checkbox per scope for a form, worded like the lists; its name starts with what it allows. */
export function scopeChoice(scope: string, checked: boolean): SafeHtml {
  const words = isScope(scope) ? SCOPES[scope] : undefined;
  return html`<label class="choice"><input type="checkbox" name="scope" value="${scope}"${checked ? html` checked` : ''}><span>${words?.description ?? scope}${
    words ? html` <span class="badge risk-${words.risk}">${RISK_WORDS[words.risk]}</span>` : ''
  } <code>${scope}</code></span></label>`;
}
