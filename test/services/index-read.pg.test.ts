/** test/sources/own-index/read.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../sources/own-index/read.test.js";
