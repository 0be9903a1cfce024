-- Token details (metadata, collection names, ENS names) kept for CHAINMAIL_ENRICH_CACHE_MS: keyed by what was asked.
CREATE TABLE enrichment_cache (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  stored_at BIGINT NOT NULL
);
