// ANSI escape sequences (CSI and OSC), then C0 and C1 controls other than tab and newline, then characters
// that hide text from a reader: zero-width and bidirectional overrides.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-_]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** What a moderator reads is exactly what is stored: no hidden characters, one Unicode form. */
export function sanitizeText(value: string): string {
  return value.normalize('NFKC').replace(ANSI, '').replace(CONTROL, '').replace(INVISIBLE, '').trim();
}

const INJECTION_PATTERNS = [
  /ignore (all |any )?(the )?(previous|prior|above) (instructions|prompts?)/i,
  /disregard (all |any )?(the )?(previous|prior|above)/i,
  /\b(system|developer) prompt\b/i,
  /you are now\b/i,
  /<\/?(system|assistant|instructions?)>/i,
  /\bjailbreak\b/i,
];

export function looksLikePromptInjection(value: string): boolean {
  return INJECTION_PATTERNS.some((pattern) => pattern.test(value));
}
