// Loaded before every test file (scripts/run-tests.mjs) where Node strips TypeScript itself: the
// service's sources load from their stripped texts, as `bin/agent-commons.js` loads them, and the
// test files are stripped by Node. Loading through tsx cost every test file's process about half a
// core-second more (docs/development.md, "Tests").
import { useStrippedSources } from '../../bin/stripped-sources.js';

useStrippedSources();
