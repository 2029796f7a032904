import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../domain/auth/sessions.ts';
import { rateKeyForIp, readCookie } from '../http/client.ts';
import { type CallResult, runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import type { CallRequest, Operation } from '../operations/types.ts';
import { html } from './html.ts';
import { notice, operatorNav } from './operator-nav.ts';
import { operatorsOnly, sendPage } from './respond.ts';

/**
 * Runs a registry operation for a page, as the REST call with the browser's session cookie would
 * (surface `web`): the pipeline reads the cookie, decides who may call it (can-call.ts), counts the
 * quota and writes the audit and activity rows.
 */
export function runForPage(
  deps: Deps,
  request: FastifyRequest,
  op: Operation,
  input: Record<string, unknown>,
): Promise<CallResult> {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const call: CallRequest = {
    surface: 'web',
    requestId: request.id,
    ip: rateKeyForIp(request.ip),
    userAgent: header('user-agent'),
    sessionId: readCookie(header('cookie'), SESSION_COOKIE),
    input: definedOnly(input),
    log: request.log,
    headersUnused: false,
    httpHeaders: request.headers,
  };
  return runOperation(deps, op, call);
}

/**
 * Runs an operator decision the console's form asked for, through the operation every other door
 * uses. The submitted form is the operator's confirmation, so the page sends `confirm: true` (an
 * agent's tool call is a dry run without it).
 */
export function runFromPage(
  deps: Deps,
  request: FastifyRequest,
  op: Operation,
  input: Record<string, unknown>,
): Promise<CallResult> {
  return runForPage(deps, request, op, { ...input, confirm: true });
}

/** A form field left out is a property left out (the input schema refuses an undefined value). */
function definedOnly(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}

interface Refused {
  error?: string;
  error_kind?: string;
  message?: string;
  tier?: string;
}

/**
 * The page for an operation's answer: a refused caller gets what the console always showed (no
 * session: to /signin; a member whose tier does not grant the scope: "Operators only"), anything
 * else the answer's own status with `done` or the refusal's message.
 */
export function answerPage(
  reply: FastifyReply,
  result: CallResult,
  page: { title: string; back: string; done: string; failed: string },
) {
  const body = result.body as Refused;
  if (result.status === 401) return reply.redirect('/signin', 303);
  if (result.status === 403 && (body.error_kind === 'tier' || body.error_kind === 'insufficient_scope'))
    return operatorsOnly(reply, body.tier ?? 'unknown');
  const text = result.status < 400 ? page.done : `${page.failed}: ${body.message ?? body.error ?? 'refused'}`;
  if (result.headers['retry-after']) reply.header('retry-after', result.headers['retry-after']);
  return sendPage(
    reply,
    result.status,
    page.title,
    html`${operatorNav()}<h1>${page.title}</h1>${notice(text)}<p><a href="${page.back}">Back to the queue</a></p>`,
  );
}
