/**
 * Every setting the service reads, parsed once at start. The settings are declared once, in
 * config/schema.ts (variable, path, type, default, secrecy, description); the Config type is derived
 * from that declaration and docs/configuration.md is rendered from it (`npm run docs`).
 */
import { type ConfigOf, readSchema } from './config/read.ts';
import { CONFIG_SCHEMA } from './config/schema.ts';
import type { Env } from './config/settings.ts';

export { MODEL_CLASSES, type ModelClass } from './config/research.ts';
export { isLoopback } from './config/settings.ts';

export type Config = ConfigOf<typeof CONFIG_SCHEMA>;
export type Limits = Config['limits'];
export type ResearchConfig = Config['research'];
export type CodeHostConfig = Config['codeHost'];
export type OidcConfig = NonNullable<Config['oidc']>;

/** Freezes an object and everything reachable from it, so a loaded config cannot change under anyone. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Reads every setting from `env` (a bad value throws one sentence naming the variable and what it
 * accepts), then applies `overrides`. The result is frozen all the way down: to change a setting,
 * build a new config (load again, or spread into a new object).
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  return deepFreeze({ ...readSchema(CONFIG_SCHEMA, env), ...overrides });
}

/** The limits when no variable sets them. */
export const DEFAULT_LIMITS: Limits = loadConfig({}).limits;
