// The settings' one declaration (src/config/schema.ts): what loadConfig reads, what the docs say, and
// the frozen result.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { renderConfigurationPage } from '../scripts/configuration-page.ts';
import { declaredSettings } from '../src/config/read.ts';
import { CONFIG_SCHEMA } from '../src/config/schema.ts';
import { baseUrl, integer } from '../src/config/settings.ts';
import { type Config, loadConfig } from '../src/config.ts';

const SETTINGS = declaredSettings(CONFIG_SCHEMA);
const SETTING_PATHS = new Set(SETTINGS.map(({ path }) => path));

function valueAt(config: object, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], config);
}

/** Whether the object holding a setting exists (an optional group is undefined unless configured). */
function hasParent(config: object, path: string): boolean {
  const parent = path.split('.').slice(0, -1).join('.');
  return parent === '' || valueAt(config, parent) !== undefined;
}

/**
 * Every path to a value that is not a plain object, e.g. `limits.tokenPerMinute`, or to a setting
 * that loads as one (`trustProxy`).
 */
function leafPaths(node: object, prefix = ''): string[] {
  return Object.entries(node).flatMap(([key, value]) =>
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    !SETTING_PATHS.has(`${prefix}${key}`)
      ? leafPaths(value, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  );
}

describe('the settings declaration', () => {
  test('each variable is declared once, and every loaded value comes from a declared setting', () => {
    const variables = SETTINGS.map(({ setting }) => setting.env);
    assert.equal(new Set(variables).size, variables.length, 'a variable declared twice');
    const declared = SETTINGS.map(({ path }) => path);
    const config = loadConfig({
      OIDC_ISSUER: 'https://id.example',
      OIDC_CLIENT_ID: 'c',
      OIDC_CLIENT_SECRET: 's',
    });
    const loaded = leafPaths(config);
    // A leaf is a declared setting, or an optional group left out (undefined).
    for (const path of loaded)
      assert.ok(
        declared.some((other) => other === path || other.startsWith(`${path}.`)),
        `${path} is not declared`,
      );
    for (const path of declared)
      if (hasParent(config, path)) assert.ok(loaded.includes(path), `${path} is not loaded`);
    assert.ok(loaded.includes('oidc.clientSecret'));
  });

  test('the documented default is the default loaded from an empty environment', () => {
    const defaults = loadConfig({});
    for (const { path, setting } of SETTINGS) {
      const shown = /^`([^`]*)`$/.exec(setting.defaultText)?.[1];
      if (shown === undefined) continue; // derived, or unset (checked below)
      // Setting the variable to the documented default changes nothing.
      const unset = setting.read(undefined, defaults as never);
      assert.deepEqual(setting.read(shown === '' ? undefined : shown, defaults as never), unset, setting.env);
      if (hasParent(defaults, path)) assert.deepEqual(valueAt(defaults, path), unset, setting.env);
    }
    assert.equal(defaults.publicUrl, 'http://127.0.0.1:3000');
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).publicUrl, 'http://localhost:8080');
    assert.equal(defaults.research.baseUrl, 'http://127.0.0.1');
    assert.deepEqual(defaults.research.models, {
      small: 'extractive-small',
      medium: 'extractive-medium',
      large: 'extractive-large',
    });
    for (const { path, setting } of SETTINGS.filter(({ setting }) => setting.defaultText === 'unset'))
      assert.equal(valueAt(defaults, path), undefined, setting.env);
    assert.equal(defaults.oidc, undefined);
  });

  test('a bad value is one sentence naming the variable and what it accepts', () => {
    const refusals: [Record<string, string>, string][] = [
      [{ PORT: 'eighty' }, 'PORT must be an integer >= 0 (got "eighty")'],
      [{ LIMIT_TOKEN_PER_MINUTE: '0' }, 'LIMIT_TOKEN_PER_MINUTE must be an integer >= 1 (got "0")'],
      [{ SEED_DEMO: 'maybe' }, 'SEED_DEMO must be true or false (got "maybe")'],
      [{ VCS_API_URL: 'ftp://git.example' }, 'VCS_API_URL must be an http(s) URL (got "ftp://git.example")'],
      [{ RESEARCH_PROVIDER: 'gpt' }, 'RESEARCH_PROVIDER must be none, openai or anthropic (got "gpt")'],
      [{ RESEARCH_PROVIDER: 'openai' }, 'RESEARCH_MODEL_SMALL must be set when RESEARCH_PROVIDER is openai'],
      [{ EVENT_URL_HOSTS: ' , ' }, 'EVENT_URL_HOSTS must name at least one host'],
      [{ OIDC_ISSUER: 'https://id.example' }, 'OIDC_ISSUER and OIDC_CLIENT_ID must be set together'],
      [
        { RETENTION_ACTIVITY_DAYS: '-1' },
        'RETENTION_ACTIVITY_DAYS must be a whole number of days (0 or keep: kept forever) (got "-1")',
      ],
    ];
    for (const [env, message] of refusals)
      assert.throws(() => loadConfig(env), { message }, JSON.stringify(env));
  });

  test('a retention window is days, and keep or 0 keeps forever', () => {
    assert.equal(loadConfig({ RETENTION_ACTIVITY_DAYS: ' 30 ' }).retention.activity, 30);
    assert.equal(loadConfig({ RETENTION_EVENT_LOG_DAYS: 'KEEP' }).retention.eventLog, 0);
    assert.equal(loadConfig({ RETENTION_OPERATOR_AUDIT_DAYS: '0' }).retention.operatorAudit, 0);
    assert.equal(loadConfig({}).retention.operatorAudit, 1095);
    assert.throws(() => loadConfig({ RETENTION_SESSIONS_DAYS: '1.5' }), /RETENTION_SESSIONS_DAYS must be/);
  });

  test('a secret setting is left out of its error message', () => {
    const secretNumber = integer({
      env: 'PIN',
      group: 'server',
      default: 1,
      min: 1000,
      secret: true,
      description: '',
    });
    assert.throws(() => secretNumber.read('12', undefined as never), {
      message: 'PIN must be an integer >= 1000',
    });
    const secretUrl = baseUrl({
      env: 'HOOK',
      group: 'events',
      default: 'https://a.example',
      secret: true,
      description: '',
    });
    assert.throws(
      () => secretUrl.read('token-abc', undefined as never),
      (error: Error) => {
        assert.equal(error.message, 'HOOK must be an http(s) URL');
        return true;
      },
    );
  });

  test('the Config type is derived from the declaration', () => {
    const config: Config = loadConfig({ RESEARCH_PROVIDER: 'none' });
    const provider: 'none' | 'openai' | 'anthropic' = config.research.provider;
    const port: number = config.port;
    const hosts: string[] = config.eventUrlHosts;
    // @ts-expect-error -- not a declared provider
    const unknownProvider: Config['research']['provider'] = 'gpt';
    // @ts-expect-error -- no such setting
    config.nonexistent;
    assert.deepEqual([provider, port, hosts, unknownProvider], ['none', 3000, ['lu.ma', 'luma.com'], 'gpt']);
  });
});

describe('the loaded config is frozen', () => {
  test('assigning to it, or to anything inside it, throws in strict mode', () => {
    const config = loadConfig({}, { limits: { ...loadConfig({}).limits, tokenPerMinute: 5 } });
    assert.equal(config.limits.tokenPerMinute, 5);
    const writes: [string, () => void][] = [
      ['port', () => Object.assign(config, { port: 1 })],
      ['limits', () => Object.assign(config.limits, { tokenPerMinute: 1 })],
      ['research.models', () => Object.assign(config.research.models, { small: 'x' })],
      ['codeHost', () => Object.assign(config.codeHost, { timeoutMs: 1 })],
      ['databaseTimeouts', () => Object.assign(config.databaseTimeouts, { statementTimeoutMs: 1 })],
      ['eventUrlHosts', () => config.eventUrlHosts.push('evil.example')],
      ['a new key', () => Object.assign(config, { extra: true })],
    ];
    for (const [what, write] of writes) assert.throws(write, TypeError, what);
    // This file is an ES module, so strict: a plain assignment throws too (the types forbid it as well).
    assert.throws(() => {
      // @ts-expect-error -- readonly
      config.port = 1;
    }, TypeError);
    assert.equal(config.port, 3000);
    assert.equal(config.limits.tokenPerMinute, 5);
    assert.deepEqual(config.eventUrlHosts, ['lu.ma', 'luma.com']);
    const withOidc = loadConfig({ OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c' });
    assert.ok(Object.isFrozen(withOidc.oidc));
  });

  test('a changed setting is a new config, built by loading again or spreading', () => {
    const base = loadConfig({});
    const changed = loadConfig({}, { ...base, limits: { ...base.limits, feedbackPerHour: 99 } });
    assert.equal(changed.limits.feedbackPerHour, 99);
    assert.equal(base.limits.feedbackPerHour, 10);
  });
});

test('docs/configuration.md is what the declaration renders (run npm run docs after changing a setting)', () => {
  const committed = readFileSync('docs/configuration.md', 'utf8');
  assert.equal(committed, renderConfigurationPage());
  for (const { setting } of SETTINGS) assert.match(committed, new RegExp(`^\\| \`${setting.env}\` \\|`, 'm'));
});

test('HTTP timeouts: the head within the whole request; unset, the head follows a shorter request bound', () => {
  assert.deepEqual(loadConfig({}).connections, {
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 10_000,
    keepAliveTimeoutMs: 72_000,
    maxPerAddress: 100,
  });
  assert.equal(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '5000' }).connections.headersTimeoutMs, 5000);
  assert.equal(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' }).connections.headersTimeoutMs, 10_000);
  assert.throws(
    () => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '6000' }),
    /HTTP_HEADERS_TIMEOUT_MS must be at most HTTP_REQUEST_TIMEOUT_MS \(5000\) \(got "6000"\)/,
  );
});
