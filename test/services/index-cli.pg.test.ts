/** test/cli/commands/index-chain.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../cli/commands/index-chain.test.js";
