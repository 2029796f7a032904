import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { getIssue, listIssues, recentIssues, searchStories } from '../../domain/content/newsletter.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';
import { BAD_INPUT, limitField, PUBLIC_CONTENT_TOOL } from './public-tool.ts';

const AREA = { ...PUBLIC_CONTENT_TOOL, tag: 'newsletter' } as const;
const NOT_FOUND = refusedWith(['issue_not_found', 'story_not_found'], 'No such issue or story');
const SLUG = Type.String({ minLength: 1, maxLength: 80, description: 'The issue slug.' });

const StorySchema = Type.Object({
  id: Type.String(),
  title: Type.String(),
  body: Type.String({ description: 'Markdown.' }),
});
const IssueSchema = Type.Object({
  slug: Type.String(),
  title: Type.String(),
  date: Type.String({ format: 'date' }),
  summary: Type.Union([Type.String(), Type.Null()]),
  intro: Type.String({ description: 'Markdown before the first story.' }),
  stories: Type.Array(StorySchema),
  updated_at: Type.String({ format: 'date-time' }),
});

const issueNotFound = (slug: string) => apiError('issue_not_found', { slug });

const ListInput = strictObject({ limit: limitField(50, 10) });
export const listNewsletterIssues = defineOperation<typeof ListInput.static, unknown>({
  ...AREA,
  id: 'signalListIssues',
  path: '/api/signal/issues',
  summary: 'List the community newsletter’s issues',
  description: 'Public. Newest first: slug, title, date, summary and the number of stories.',
  mcpTool: 'ic_signal_list_issues',
  input: ListInput,
  output: Type.Object({
    ok: Type.Literal(true),
    count: Type.Integer(),
    issues: Type.Array(
      Type.Object({
        slug: Type.String(),
        title: Type.String(),
        date: Type.String({ format: 'date' }),
        summary: Type.Union([Type.String(), Type.Null()]),
        story_count: Type.Integer(),
      }),
    ),
  }),
  errors: [BAD_INPUT],
  async handler({ deps, input }) {
    const issues = await listIssues(deps, input.limit ?? 10);
    return { body: { ok: true, count: issues.length, issues } };
  },
});

const IssueOutput = Type.Object({ ok: Type.Literal(true), issue: IssueSchema });

const LatestInput = strictObject({});
export const getLatestNewsletterIssue = defineOperation<typeof LatestInput.static, typeof IssueOutput.static>(
  {
    ...AREA,
    id: 'signalGetLatest',
    path: '/api/signal/latest',
    summary: 'Read the newest newsletter issue',
    description: 'Public. The newest issue in full, stories in Markdown. 404 until an issue is published.',
    mcpTool: 'ic_signal_get_latest',
    input: LatestInput,
    output: IssueOutput,
    errors: [BAD_INPUT, refusedWith(['no_issues'], 'No issue published yet')],
    async handler({ deps }) {
      const [issue] = await recentIssues(deps, 1);
      if (!issue) throw apiError('no_issues');
      return { body: { ok: true, issue } };
    },
  },
);

const IssueInput = strictObject({ slug: SLUG });
export const getNewsletterIssue = defineOperation<typeof IssueInput.static, typeof IssueOutput.static>({
  ...AREA,
  id: 'signalGetIssue',
  path: '/api/signal/issue',
  summary: 'Read one newsletter issue',
  description: 'Public. The issue in full: intro and stories, in Markdown.',
  mcpTool: 'ic_signal_get_issue',
  input: IssueInput,
  output: IssueOutput,
  errors: [BAD_INPUT, NOT_FOUND],
  async handler({ deps, input }) {
    const issue = await getIssue(deps, input.slug);
    if (!issue) throw issueNotFound(input.slug);
    return { body: { ok: true, issue } };
  },
});

const StoryInput = strictObject({
  slug: SLUG,
  story_id: Type.String({ minLength: 1, maxLength: 80, description: 'The story id within the issue.' }),
});
const StoryOutput = Type.Object({
  ok: Type.Literal(true),
  story: Type.Object({
    ...StorySchema.properties,
    issue_slug: Type.String(),
    issue_title: Type.String(),
    date: Type.String({ format: 'date' }),
  }),
});
export const getNewsletterStory = defineOperation<typeof StoryInput.static, typeof StoryOutput.static>({
  ...AREA,
  id: 'signalGetStory',
  path: '/api/signal/story',
  summary: 'Read one story of a newsletter issue',
  description: 'Public. The story in Markdown, with its issue’s slug, title and date.',
  mcpTool: 'ic_signal_get_story',
  input: StoryInput,
  output: StoryOutput,
  errors: [BAD_INPUT, NOT_FOUND],
  async handler({ deps, input }) {
    const issue = await getIssue(deps, input.slug);
    if (!issue) throw issueNotFound(input.slug);
    const story = issue.stories.find((s) => s.id === input.story_id);
    if (!story)
      throw apiError('story_not_found', {
        slug: input.slug,
        story: input.story_id,
        stories: issue.stories.map((s) => s.id),
      });
    return {
      body: {
        ok: true,
        story: { ...story, issue_slug: issue.slug, issue_title: issue.title, date: issue.date },
      },
    };
  },
});

const SearchInput = strictObject({
  q: Type.String({ minLength: 1, maxLength: 200, description: 'Words to find (matched as prefixes).' }),
  limit: limitField(50, 10),
});
export const searchNewsletter = defineOperation<typeof SearchInput.static, unknown>({
  ...AREA,
  id: 'signalSearch',
  path: '/api/signal/search',
  summary: 'Search the newsletter’s stories',
  description:
    'Public. Full-text search over every story’s title and text, best match first, each with an excerpt. Query words are matched as prefixes; no query syntax reaches the engine.',
  mcpTool: 'ic_signal_search',
  input: SearchInput,
  output: Type.Object({
    ok: Type.Literal(true),
    query: Type.String(),
    count: Type.Integer(),
    results: Type.Array(
      Type.Object({
        slug: Type.String(),
        story_id: Type.String(),
        issue_title: Type.String(),
        date: Type.String({ format: 'date' }),
        title: Type.String(),
        excerpt: Type.String(),
      }),
    ),
  }),
  errors: [BAD_INPUT],
  async handler({ deps, input }) {
    const results = await searchStories(deps, input.q, input.limit ?? 10);
    return { body: { ok: true, query: input.q, count: results.length, results } };
  },
});
