-- Records keyed by chain position; token ids, quantities and prices as exact NUMERICs.
CREATE TABLE activity (
  block_number BIGINT NOT NULL,
  log_index INTEGER NOT NULL,
  batch_index INTEGER NOT NULL,
  kind TEXT NOT NULL,
  contract TEXT NOT NULL,
  token_id NUMERIC(78, 0) NOT NULL,
  from_addr TEXT NOT NULL,
  to_addr TEXT NOT NULL,
  quantity NUMERIC(78, 0) NOT NULL,
  tx_hash TEXT NOT NULL,
  block_hash TEXT NOT NULL,
  timestamp BIGINT NOT NULL,
  contract_type TEXT NOT NULL,
  marketplace TEXT,
  currency TEXT,
  price NUMERIC,
  price_usd NUMERIC,
  PRIMARY KEY (block_number, log_index, batch_index)
);
-- Keyset pages by contract and by token walk these backwards; the whole chain walks the primary key.
CREATE INDEX activity_by_contract ON activity (contract, block_number, log_index, batch_index);
CREATE INDEX activity_by_token ON activity (contract, token_id, block_number, log_index, batch_index);
-- Hashes of indexed blocks (those with records, and the end of every range): reorg detection walks these back.
CREATE TABLE blocks (number BIGINT PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE price_answers (
  block_number BIGINT NOT NULL,
  log_index INTEGER NOT NULL,
  answer NUMERIC(78, 0) NOT NULL,
  PRIMARY KEY (block_number, log_index)
);
CREATE TABLE tokens (address TEXT PRIMARY KEY, decimals INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
