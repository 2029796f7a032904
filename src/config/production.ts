// Running in production: where Prometheus scrapes the metrics and with which bearer, and how long a
// SIGTERM waits for in-flight work. Metrics are off unless a path or a port is set, and never
// reachable from another host without the bearer.
import { durationMs, isLoopback, refuse, setting, text } from './settings.ts';

interface MetricsRead {
  metrics: { bearer?: string; host: string };
}

const bearerSpec = {
  env: 'METRICS_BEARER',
  group: 'production',
  secret: true,
  trim: true,
  accepts: 'string of 16 characters or more',
  defaultText: 'unset',
  description:
    'The bearer Prometheus sends (`Authorization: Bearer …`, `authorization.credentials` in a scrape ' +
    'config); any other request to the metrics is answered 401. Required with `METRICS_PATH`, and ' +
    'with `METRICS_PORT` unless `METRICS_HOST` is a loopback address.',
} as const;

const bearer = setting<string | undefined>(bearerSpec, (raw) => {
  if (raw !== undefined && raw.length < 16) throw refuse(bearerSpec, 'at least 16 characters');
  return raw;
});

const pathSpec = {
  env: 'METRICS_PATH',
  group: 'production',
  accepts: 'path starting with `/`',
  defaultText: 'unset',
  description:
    'Serve the metrics on the main port at this path (`/metrics`), behind `METRICS_BEARER`. Unset: not ' +
    'on the main port.',
} as const;

const hostSpec = {
  env: 'METRICS_HOST',
  group: 'production',
  default: '127.0.0.1',
  description: 'Listening address of `METRICS_PORT`.',
} as const;

const portSpec = {
  env: 'METRICS_PORT',
  group: 'production',
  accepts: 'integer ≥ 0',
  defaultText: 'unset',
  description:
    'Serve the metrics on a port of their own (at `/metrics`, any path answers), for a scraper inside ' +
    'the network; `0` picks a free port (printed at start). Unset: no metrics port. Off by default: ' +
    'with neither `METRICS_PATH` nor `METRICS_PORT` nothing serves metrics.',
} as const;

export const PRODUCTION_SCHEMA = {
  metrics: {
    bearer,
    host: text(hostSpec),
    path: setting<string | undefined, MetricsRead>(pathSpec, (raw, loaded) => {
      if (raw === undefined) return undefined;
      if (!raw.startsWith('/') || raw.includes('?')) throw refuse(pathSpec, 'a path starting with /', raw);
      if (!loaded.metrics.bearer) throw refuse(pathSpec, 'set together with METRICS_BEARER');
      return raw.replace(/(.)\/+$/, '$1');
    }),
    port: setting<number | undefined, MetricsRead>(portSpec, (raw, loaded) => {
      if (raw === undefined) return undefined;
      const port = Number(raw);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw refuse(portSpec, 'a port number', raw);
      if (!loaded.metrics.bearer && !isLoopback(loaded.metrics.host))
        throw refuse(portSpec, 'set together with METRICS_BEARER when METRICS_HOST is not loopback');
      return port;
    }),
  },
  drainGraceMs: durationMs({
    env: 'DRAIN_GRACE_MS',
    group: 'production',
    default: 25_000,
    min: 0,
    description:
      'On SIGTERM the instance answers `/readyz` 503, stops accepting connections and lets requests and ' +
      'background jobs in progress finish for up to this long before it gives its worker leases back ' +
      'and exits 0 ([deployment](deployment.md#draining-on-sigterm)). Keep it below the orchestrator’s ' +
      'own grace (Kubernetes: 30 s).',
  }),
};
