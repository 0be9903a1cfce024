/** test/ingest/venues/looksrare.v2.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../ingest/venues/looksrare.v2.test.js";
