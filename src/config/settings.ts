// The kinds of setting and how one is read from its environment variable. Every setting is declared
// once, in schema.ts, with one of the builders below; loadConfig (src/config.ts) reads them all, the
// Config type is derived from the declarations, and docs/configuration.md is rendered from them.

export type Env = Readonly<Record<string, string | undefined>>;

/** The section of docs/configuration.md that lists a setting. */
export type SettingGroup =
  | 'server'
  | 'storage'
  | 'sign-in'
  | 'oidc'
  | 'limits'
  | 'events'
  | 'code-host'
  | 'research'
  | 'payments'
  | 'retention'
  | 'production';

/** What every declaration says, whatever its kind. */
export interface SettingText {
  env: string;
  group: SettingGroup;
  /** One paragraph of Markdown for docs/configuration.md. */
  description: string;
  /** Never printed: a bad value's error message leaves it out. */
  secret?: boolean;
  /** Surrounding spaces are dropped (a value of spaces only counts as unset). */
  trim?: boolean;
}

export interface Setting<T> extends Required<SettingText> {
  readonly kind: 'setting';
  /** What the variable accepts, as the docs say it. */
  readonly accepts: string;
  /** The default as the docs say it (`unset` when there is none). */
  readonly defaultText: string;
  /**
   * raw: the variable, undefined when unset or empty. loaded: the settings declared before this one
   * (read in declaration order), for a default derived from another setting.
   */
  read(raw: string | undefined, loaded: never): T;
}

/** A nested object that exists only when all of `requires` are set; some of them alone is an error. */
export interface OptionalGroup<S> {
  readonly kind: 'optional-group';
  readonly requires: readonly (keyof S & string)[];
  readonly settings: S;
}

export function setting<T, L = unknown>(
  text: SettingText & { accepts: string; defaultText: string },
  read: (raw: string | undefined, loaded: L) => T,
): Setting<T> {
  return {
    kind: 'setting',
    secret: false,
    trim: false,
    ...text,
    read: read as Setting<T>['read'],
  };
}

/** The one-sentence error for a bad value: the variable, what it accepts, and the value unless secret. */
export function refuse(text: SettingText, what: string, raw?: string): Error {
  const got = raw === undefined || text.secret ? '' : ` (got "${raw}")`;
  return new Error(`${text.env} must be ${what}${got}`);
}

export function integer(
  text: SettingText & { default: number; min: number; unit?: string },
): Setting<number> {
  const { default: fallback, min, unit, ...rest } = text;
  return setting(
    { ...rest, accepts: `${unit ?? 'integer'} ≥ ${min}`, defaultText: `\`${fallback}\`` },
    (raw) => {
      if (raw === undefined) return fallback;
      const value = Number(raw);
      if (!Number.isInteger(value) || value < min) throw refuse(text, `an integer >= ${min}`, raw);
      return value;
    },
  );
}

/** Milliseconds, an integer. */
export function durationMs(text: SettingText & { default: number; min: number }): Setting<number> {
  return integer({ ...text, unit: 'milliseconds, integer' });
}

export function flag(text: SettingText & { default: boolean }): Setting<boolean> {
  const { default: fallback, ...rest } = text;
  return setting({ ...rest, accepts: 'boolean', defaultText: `\`${fallback}\`` }, (raw) => {
    const value = raw?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    throw refuse(text, 'true or false', raw);
  });
}

/** Free text with a default. */
export function text(spec: SettingText & { default: string; accepts?: string }): Setting<string> {
  const { default: fallback, accepts, ...rest } = spec;
  return setting(
    { ...rest, accepts: accepts ?? 'string', defaultText: `\`${fallback}\`` },
    (raw) => raw ?? fallback,
  );
}

/** Free text that may stay unset. */
export function optional(spec: SettingText & { accepts?: string }): Setting<string | undefined> {
  const { accepts, ...rest } = spec;
  return setting({ ...rest, accepts: accepts ?? 'string', defaultText: 'unset' }, (raw) => raw);
}

/** Text that must be present (inside an optional group, whose presence is checked first). */
export function required(spec: SettingText): Setting<string> {
  return setting({ ...spec, accepts: 'string', defaultText: 'unset' }, (raw) => {
    if (raw === undefined) throw refuse(spec, 'set');
    return raw;
  });
}

/** One of a fixed list of words, matched without regard to case. */
export function oneOf<const V extends string>(
  spec: SettingText & { values: readonly V[]; default: NoInfer<V> },
): Setting<V> {
  const { values, default: fallback, ...rest } = spec;
  const accepts = `one of ${values.map((value) => `\`${value}\``).join(', ')}`;
  return setting({ ...rest, accepts, defaultText: `\`${fallback}\`` }, (raw) => {
    const value = (raw ?? fallback).toLowerCase();
    if (!(values as readonly string[]).includes(value))
      throw refuse(spec, `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`, raw);
    return value as V;
  });
}

/** A comma-separated list of host names, lower-cased; at least one. */
export function hostList(spec: SettingText & { default: string }): Setting<string[]> {
  const { default: fallback, ...rest } = spec;
  return setting(
    { ...rest, accepts: 'comma-separated host names', defaultText: `\`${fallback}\`` },
    (raw) => {
      const hosts = (raw ?? fallback)
        .split(',')
        .map((host) => host.trim().toLowerCase())
        .filter(Boolean);
      if (hosts.length === 0) throw new Error(`${spec.env} must name at least one host`);
      return hosts;
    },
  );
}

/**
 * A comma-separated list of web origins (`scheme://host[:port]`, as a browser sends them in `Origin`),
 * each normalised by the URL parser (host lower-cased, default port dropped); empty when unset.
 */
export function originList(text: SettingText, raw: string | undefined): readonly string[] {
  const origins: string[] = [];
  for (const item of (raw ?? '').split(',')) {
    const value = item.trim();
    if (value === '') continue;
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    const bare =
      url && (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
    if (!url || !bare || url.pathname !== '/' || url.search || url.hash || value.endsWith('?'))
      throw refuse(
        text,
        'a comma-separated list of origins like https://agent.example (no path, no *)',
        value,
      );
    origins.push(url.origin);
  }
  return [...new Set(origins)];
}

/**
 * An http(s) base address without a trailing slash (paths are appended to it, keeping its own path).
 * The default is a fixed address or one derived from the settings read before.
 */
export function baseUrl<L = unknown>(
  spec: SettingText & { default: string | ((loaded: L) => string); defaultText?: string },
): Setting<string> {
  const { default: fallback, defaultText, ...rest } = spec;
  const shown = defaultText ?? (typeof fallback === 'string' ? `\`${fallback}\`` : 'derived');
  return setting<string, L>({ ...rest, accepts: 'http(s) URL', defaultText: shown }, (raw, loaded) => {
    const value = raw ?? (typeof fallback === 'string' ? fallback : fallback(loaded));
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw refuse(spec, 'an http(s) URL', value);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
      throw refuse(spec, 'an http(s) URL', value);
    return value.replace(/\/+$/, '');
  });
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
