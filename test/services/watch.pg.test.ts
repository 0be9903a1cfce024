/** test/watch/watch.test.ts against PostgreSQL: the journal beside an index on PostgreSQL (CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../watch/watch.test.js";
