/** test/enrichment/store-cache.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../enrichment/store-cache.test.js";
