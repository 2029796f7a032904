/**
 * The addr-spec a member's address must be, and the one spelling it is kept in (docs/decisions.md,
 * "Member email addresses"):
 * - local part: a dot-atom (RFC 5322 atext, single dots between atoms), at most 64 characters;
 *   quoted local parts are refused;
 * - domain: at least two labels of letters, digits and inner hyphens, each at most 63 characters,
 *   the last not all digits (so a dotted IPv4 address is no domain); address literals (`[…]`) are
 *   refused, and so are non-ASCII domains (their xn-- form is accepted);
 * - at most 254 characters in all (the longest path SMTP carries).
 * Forms like `::::@x.org`, `a..b@x.org`, `.a@x.org`, `a@x` or `a@-x.org` are therefore refused.
 */
const ATOM = "[a-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LOCAL = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function isDomain(domain: string): boolean {
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels.at(-1)!);
}

/** Trimmed and lower-cased, or undefined when it is not an address the service can mail. */
export function normalizeEmail(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const email = raw.trim().toLowerCase();
  if (email.length > 254) return undefined;
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  return at > 0 && local.length <= 64 && LOCAL.test(local) && isDomain(email.slice(at + 1))
    ? email
    : undefined;
}
