/** test/ingest/writers.test.ts against PostgreSQL: writer takeover and service replicas on one PostgreSQL index. */
import "../ingest/writers.test.js";
