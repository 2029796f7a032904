import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { donationPage, getPresentation, listNews, listPresentations } from '../../domain/content/library.ts';
import { paymentStatus } from '../../domain/payments/describe.ts';
import { DONATE_PATH } from '../../domain/payments/terms.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';
import { BAD_INPUT, limitField, PUBLIC_CONTENT_TOOL } from './public-tool.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const NewsInput = strictObject({ limit: limitField(50, 20) });
export const getNews = defineOperation<typeof NewsInput.static, unknown>({
  ...PUBLIC_CONTENT_TOOL,
  tag: 'news',
  id: 'newsGet',
  path: '/api/news',
  summary: 'Read the community’s news links',
  description: 'Public. Links the operator shares, newest first, each with a short Markdown note.',
  mcpTool: 'ic_news_get',
  input: NewsInput,
  output: Type.Object({
    ok: Type.Literal(true),
    count: Type.Integer(),
    items: Type.Array(
      Type.Object({
        id: Type.String(),
        title: Type.String(),
        url: Type.String({ format: 'uri' }),
        date: Type.String({ format: 'date' }),
        note: Type.String(),
      }),
    ),
  }),
  errors: [BAD_INPUT],
  async handler({ deps, input }) {
    const items = await listNews(deps, input.limit ?? 20);
    return { body: { ok: true, count: items.length, items } };
  },
});

const PresentationSummary = {
  number: Type.Integer(),
  title: Type.String(),
  date: Type.String({ format: 'date' }),
  speaker: Nullable(Type.String()),
  summary: Nullable(Type.String()),
};

const ListInput = strictObject({ limit: limitField(100, 20) });
export const listPresentationsTool = defineOperation<typeof ListInput.static, unknown>({
  ...PUBLIC_CONTENT_TOOL,
  tag: 'presentations',
  id: 'presentationsList',
  path: '/api/presentations',
  summary: 'List the community’s presentations',
  description: 'Public. Talks given at the space, highest number (newest) first.',
  mcpTool: 'ic_presentations_list',
  input: ListInput,
  output: Type.Object({
    ok: Type.Literal(true),
    count: Type.Integer(),
    presentations: Type.Array(Type.Object(PresentationSummary)),
  }),
  errors: [BAD_INPUT],
  async handler({ deps, input }) {
    const presentations = await listPresentations(deps, input.limit ?? 20);
    return { body: { ok: true, count: presentations.length, presentations } };
  },
});

const GetInput = strictObject({ number: Type.Integer({ minimum: 1, maximum: 999999 }) });
export const getPresentationTool = defineOperation<typeof GetInput.static, unknown>({
  ...PUBLIC_CONTENT_TOOL,
  tag: 'presentations',
  id: 'presentationsGet',
  path: '/api/presentations/get',
  summary: 'Read one presentation',
  description: 'Public. The talk with its links (slides, video) and notes in Markdown.',
  mcpTool: 'ic_presentations_get',
  input: GetInput,
  output: Type.Object({
    ok: Type.Literal(true),
    presentation: Type.Object({
      ...PresentationSummary,
      slides_url: Nullable(Type.String({ format: 'uri' })),
      video_url: Nullable(Type.String({ format: 'uri' })),
      notes: Type.String(),
    }),
  }),
  errors: [BAD_INPUT, refusedWith(['presentation_not_found'], 'No presentation with that number')],
  async handler({ deps, input }) {
    const presentation = await getPresentation(deps, input.number);
    if (!presentation) throw apiError('presentation_not_found', { number: input.number });
    return { body: { ok: true, presentation } };
  },
});

const DonateInput = strictObject({});
export const donateTool = defineOperation<typeof DonateInput.static, unknown>({
  ...PUBLIC_CONTENT_TOOL,
  tag: 'payments',
  id: 'donateInfo',
  path: '/api/payments/donate/info',
  summary: 'How to give to the community',
  description:
    'Public. The donation tiers and how to give, as the operator published them (`donate.md`), and how an agent pays over x402 (`pay_with_x402`: POST the resource, answer its 402 with a signed PAYMENT-SIGNATURE; `payments_accepted` false while the operator has not set a payee); `ic_donations_total` is the donor wall. 404 when there is neither a published page nor x402 payments.',
  mcpTool: 'ic_donate',
  input: DonateInput,
  output: Type.Object({
    ok: Type.Literal(true),
    title: Type.String(),
    how_to_give: Type.String({ description: 'Markdown.' }),
    give_url: Nullable(Type.String({ format: 'uri' })),
    tiers: Type.Array(
      Type.Object({
        name: Type.String(),
        amount: Type.Number(),
        currency: Type.String(),
        per: Nullable(Type.String()),
        description: Type.String(),
      }),
    ),
    payments_accepted: Type.Boolean(),
    pay_with_x402: Type.Object({
      resource: Type.String({ format: 'uri' }),
      method: Type.Literal('POST'),
      body: Type.Record(Type.String(), Type.String()),
      payment_header: Type.Literal('PAYMENT-SIGNATURE'),
      receipt_header: Type.Literal('PAYMENT-RESPONSE'),
      discovery: Type.String({ format: 'uri' }),
      status: Type.Record(Type.String(), Type.Unknown()),
    }),
    donor_wall_tool: Type.Literal('ic_donations_total'),
  }),
  errors: [BAD_INPUT, refusedWith(['no_donation_page'], 'No donation page published')],
  async handler({ deps }) {
    const page = await donationPage(deps);
    const status = paymentStatus(deps.config.payments);
    if (!page && !status.accepting) throw apiError('no_donation_page');
    const x402 = {
      resource: `${deps.config.publicUrl}${DONATE_PATH}`,
      method: 'POST' as const,
      body: {
        amount_usd: 'number, required (see status for the accepted amounts)',
        name: 'string, optional: shown on the donor wall',
        message: 'string, optional: shown on the donor wall',
        anonymous: 'boolean, optional: counted, never shown',
      },
      payment_header: 'PAYMENT-SIGNATURE' as const,
      receipt_header: 'PAYMENT-RESPONSE' as const,
      discovery: `${deps.config.publicUrl}/discovery/resources`,
      status,
    };
    const shown = page ?? {
      title: 'Donate',
      how_to_give: `Pay over x402: POST ${x402.resource} with {"amount_usd": …}, sign the payment its 402 answer asks for, and send the request again with the PAYMENT-SIGNATURE header.`,
      give_url: null,
      tiers: [],
    };
    return {
      body: {
        ok: true,
        ...shown,
        payments_accepted: status.accepting,
        pay_with_x402: x402,
        donor_wall_tool: 'ic_donations_total' as const,
      },
    };
  },
});
