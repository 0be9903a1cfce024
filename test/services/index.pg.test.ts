/** test/ingest/indexer.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../ingest/indexer.test.js";
