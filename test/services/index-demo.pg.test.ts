/** test/ingest/demo.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../ingest/demo.test.js";
