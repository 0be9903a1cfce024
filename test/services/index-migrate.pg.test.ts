/** test/sources/own-index/migrate.test.ts against PostgreSQL: an SQLite index moved into PostgreSQL. */
import "../sources/own-index/migrate.test.js";
