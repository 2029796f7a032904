// Reads a schema (nested objects whose leaves are settings) from the environment, and lists its
// settings with their paths for the docs. The loaded value's type is derived from the schema.
import type { Env, OptionalGroup, Setting } from './settings.ts';

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * The value a schema node loads as: a setting its parsed type, an optional group its object or
 * undefined, a nested object the same keys (readonly: the loaded config is frozen), those that may be
 * undefined optional.
 */
export type ConfigOf<S> =
  S extends Setting<infer T>
    ? T
    : S extends OptionalGroup<infer G>
      ? ConfigOf<G> | undefined
      : Simplify<
          { readonly [K in keyof S as undefined extends ConfigOf<S[K]> ? never : K]: ConfigOf<S[K]> } & {
            readonly [K in keyof S as undefined extends ConfigOf<S[K]> ? K : never]?: ConfigOf<S[K]>;
          }
        >;

type Node = Setting<unknown> | OptionalGroup<any> | { readonly [key: string]: Node };

function isSetting(node: Node): node is Setting<unknown> {
  return (node as Setting<unknown>).kind === 'setting';
}

function isOptionalGroup(node: Node): node is OptionalGroup<Record<string, Node>> {
  return (node as OptionalGroup<object>).kind === 'optional-group';
}

/** The variable as the setting sees it: undefined when unset or empty (or only spaces, when trimmed). */
function rawValue(env: Env, setting: Setting<unknown>): string | undefined {
  const raw = setting.trim ? env[setting.env]?.trim() : env[setting.env];
  return raw === '' ? undefined : raw;
}

/** Reads every setting in declaration order; `root` is what has been read so far, for derived defaults. */
function readInto(
  schema: Record<string, Node>,
  env: Env,
  target: Record<string, unknown>,
  root: object,
): void {
  for (const [key, node] of Object.entries(schema)) {
    if (isSetting(node)) {
      target[key] = node.read(rawValue(env, node), root as never);
    } else if (isOptionalGroup(node)) {
      const required = node.requires.map((name) => node.settings[name] as Setting<unknown>);
      const present = required.filter((setting) => rawValue(env, setting) !== undefined);
      if (present.length === 0) {
        target[key] = undefined;
        continue;
      }
      if (present.length < required.length)
        throw new Error(`${required.map((setting) => setting.env).join(' and ')} must be set together`);
      const group: Record<string, unknown> = {};
      target[key] = group;
      readInto(node.settings, env, group, root);
    } else {
      const group: Record<string, unknown> = {};
      target[key] = group;
      readInto(node as Record<string, Node>, env, group, root);
    }
  }
}

export function readSchema<S extends Record<string, Node>>(schema: S, env: Env): ConfigOf<S> {
  const root: Record<string, unknown> = {};
  readInto(schema, env, root, root);
  return root as ConfigOf<S>;
}

export interface DeclaredSetting {
  /** Where it lands in the loaded config, e.g. `limits.tokenPerMinute`. */
  path: string;
  setting: Setting<unknown>;
}

/** Every setting of a schema with its path, in declaration order. */
export function declaredSettings(schema: Record<string, Node>, prefix = ''): DeclaredSetting[] {
  return Object.entries(schema).flatMap(([key, node]) => {
    const path = prefix + key;
    if (isSetting(node)) return [{ path, setting: node }];
    if (isOptionalGroup(node)) return declaredSettings(node.settings, `${path}.`);
    return declaredSettings(node as Record<string, Node>, `${path}.`);
  });
}
