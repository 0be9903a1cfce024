/** test/watch/wake.test.ts against PostgreSQL: the index and the journal there, readers woken by LISTEN/NOTIFY. */
import "../watch/wake.test.js";
