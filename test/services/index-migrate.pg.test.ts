/** test/index-migrate.test.ts against PostgreSQL: an SQLite index moved into PostgreSQL. */
import "../index-migrate.test.js";
