/** test/index-writers.test.ts against PostgreSQL: writer takeover and service replicas on one PostgreSQL index. */
import "../index-writers.test.js";
