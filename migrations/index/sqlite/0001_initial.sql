-- The schema of the first index files (chainmail 0.1), kept with IF NOT EXISTS so that an index file created
-- before migrations existed is recorded as version 1 without change.
CREATE TABLE IF NOT EXISTS activity (
  block_number INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  batch_index INTEGER NOT NULL,
  kind TEXT NOT NULL,
  contract TEXT NOT NULL,
  token_id TEXT NOT NULL,
  from_addr TEXT NOT NULL,
  to_addr TEXT NOT NULL,
  quantity TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  block_hash TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  contract_type TEXT NOT NULL,
  marketplace TEXT,
  currency TEXT,
  price TEXT,
  price_usd REAL,
  PRIMARY KEY (block_number, log_index, batch_index)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS activity_by_contract ON activity (contract, block_number, log_index, batch_index);
CREATE INDEX IF NOT EXISTS activity_by_token ON activity (contract, token_id, block_number, log_index, batch_index);
-- Hashes of indexed blocks (those with records, and the end of every range): reorg detection walks these back.
CREATE TABLE IF NOT EXISTS blocks (number INTEGER PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS price_answers (
  block_number INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  answer TEXT NOT NULL,
  PRIMARY KEY (block_number, log_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tokens (address TEXT PRIMARY KEY, decimals INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
