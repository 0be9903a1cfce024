/** test/watch/cap.test.ts against PostgreSQL: max_per_hour's held records and hours' digests on PostgreSQL. */
import "../watch/cap.test.js";
