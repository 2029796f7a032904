/** The scope identifiers a page lists under `<ul class="scopes" id="…">`, in order. */
export function scopesListed(page: string, id: string): string[] {
  const list = page.match(new RegExp(`<ul class="scopes" id="${id}">(.*?)</ul>`, 's'))?.[1] ?? '';
  return [...list.matchAll(/<code>([^<]+)<\/code><\/li>/g)].map((match) => match[1]);
}
