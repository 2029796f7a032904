import type { TestApp } from './app.ts';

/** A raw JSON-RPC 2.0 client for /api/a2a on a test app: post a body, call a method, send a task. */
export function a2aClient(app: () => TestApp) {
  const post = (body: unknown, token?: string) => app().call('POST', '/api/a2a', { body, token });
  const rpc = (method: string, params?: unknown, token?: string, id: string | number = 1) =>
    post({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }, token);
  const send = (capability: string, args: unknown, token?: string, extra: Record<string, unknown> = {}) =>
    rpc('tasks/send', { capability, arguments: args, ...extra }, token);
  return { post, rpc, send };
}
