/** test/index-looksrare-v2.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../index-looksrare-v2.test.js";
