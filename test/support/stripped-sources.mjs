// Loaded before every test file (scripts/run-tests.mjs): the service's sources load from their
// stripped texts, as `bin/agent-commons.js` loads them, and the test files are stripped by Node.
import { useStrippedSources } from '../../bin/stripped-sources.js';

useStrippedSources();
