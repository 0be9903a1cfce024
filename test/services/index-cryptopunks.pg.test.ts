/** test/ingest/venues/cryptopunks.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../ingest/venues/cryptopunks.test.js";
