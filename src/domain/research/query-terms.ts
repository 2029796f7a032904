/** Words too common to say anything about a passage; dropped from queries unless nothing else is left. */
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it its ' +
    'me my no not of on or our she so such than that the their them then there these they this those to ' +
    'was we were what when where which while who whom why will with would you your about after also any ' +
    'between both each more most other over same should some under until up very'
  ).split(' '),
);

const MAX_TERMS = 16;

/** The query's distinct words, lowercased, stopwords dropped; no query syntax ever reaches the engine. */
export function queryTerms(query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  const content = words.filter((w) => !STOPWORDS.has(w));
  return (content.length > 0 ? content : words).slice(0, MAX_TERMS);
}
