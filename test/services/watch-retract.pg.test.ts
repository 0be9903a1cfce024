/** test/watch/retract.test.ts against PostgreSQL: retractions journalled beside an index on PostgreSQL. */
import "../watch/retract.test.js";
